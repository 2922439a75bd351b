//! Trust in a project configuration (`host.md` §1.1): what in a `promptforge.toml`
//! found by the upward search acts on the world (starting a program, handing an
//! environment variable to anything, sending a model's requests or search queries
//! off this machine, reading a file outside its folder, raising a limit), the one refusal that names it, and the records `promptforge trust`
//! keeps of the configurations the user trusted (path and content hash).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// `$PROMPTFORGE_TRUST`: `1` trusts the project configuration for one invocation.
pub const TRUST_ENV: &str = "PROMPTFORGE_TRUST";

/// The records' file name under the user's state folder.
pub const RECORDS_FILE: &str = "trusted.json";

/// What part of the Host an acting key belongs to, so the part can be withheld.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// A `[plugin."ns/name"]` table.
    Plugin(String),
    /// A `[model.NAME]` table.
    Model(String),
    /// The `[web]` table.
    Web,
    /// The `[limits]` table.
    Limits,
    /// The `[trace]` table.
    Trace,
    /// The `[test]` table.
    Test,
}

/// What an acting key would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// Start a program (a Plugin's `command` or `args`).
    StartProgram,
    /// Hand the environment variable to a server or program.
    HandVariable {
        /// The variable's name, as written.
        variable: String,
    },
    /// Send the key the user's own configuration names to a server the project names.
    RedirectKey {
        /// The variable the user's configuration names.
        variable: String,
    },
    /// Send a model's requests (prompts, tool results) to a server that is not on
    /// this machine (a `base_url` whose host is not a loopback address), which
    /// answers as the model.
    SendModelRequests,
    /// Send search queries to a server that is not on this machine.
    SendSearchQueries,
    /// Read a file outside the configuration's own folder.
    ReadOutside,
    /// Raise a limit above the user's configuration or the defaults.
    RaiseLimit {
        /// The limit it would otherwise have.
        base: u64,
    },
    /// Let `fetch` reach loopback, private and link-local addresses.
    ReachPrivateAddresses,
    /// Send every run's trace (prompts, replies, tool output) to a server.
    SendTraces,
    /// Write files outside the configuration's own folder.
    WriteOutside,
}

impl Act {
    fn phrase(&self) -> String {
        match self {
            Act::StartProgram => "start a program".to_owned(),
            Act::HandVariable { variable } => {
                format!("hand the environment variable {variable:?} to a server or program")
            }
            Act::RedirectKey { variable } => format!(
                "send the key in {variable:?} (named by your own configuration) to a server it names"
            ),
            Act::SendModelRequests => {
                "send the model's requests (prompts, tool results) to a server it names, off this machine".to_owned()
            }
            Act::SendSearchQueries => {
                "send search queries to a server it names, off this machine".to_owned()
            }
            Act::ReadOutside => "read a file outside its own folder".to_owned(),
            Act::RaiseLimit { base } => format!("raise the limit above {base}"),
            Act::ReachPrivateAddresses => {
                "let fetch reach loopback and private addresses".to_owned()
            }
            Act::SendTraces => "send every run's trace to a server it names".to_owned(),
            Act::WriteOutside => "write files outside its own folder".to_owned(),
        }
    }
}

/// One acting key of a project configuration that is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustNeed {
    /// The configuration file.
    pub file: PathBuf,
    /// 1-based line of the key.
    pub line: Option<u32>,
    /// The key, dotted (`plugin."evil/mcp".command`).
    pub key: String,
    /// The part of the Host it belongs to.
    pub part: Part,
    /// What it would do.
    pub act: Act,
}

impl TrustNeed {
    /// The folder `promptforge trust` is given to trust this configuration.
    pub fn folder(&self) -> PathBuf {
        match self.file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }
}

impl fmt::Display for TrustNeed {
    /// `{file}:{line}: {key} would {act}, and this configuration is not trusted;
    /// review it, then run: promptforge trust {folder}` (the file's content is
    /// never quoted: only the key and the variable names it hands).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(
            f,
            ": {} would {}, and this configuration is not trusted; review it, then run: promptforge trust {}",
            self.key,
            self.act.phrase(),
            shell_word(&self.folder().display().to_string())
        )
    }
}

/// `text` as one shell word: as it is when it is plain, else single-quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The refusal of a configuration with acting keys that is not trusted: the
/// first key, and how many more there are.
pub fn refusal(needs: &[TrustNeed]) -> Option<String> {
    let first = needs.first()?;
    Some(match needs.len() {
        1 => first.to_string(),
        n => format!("{first} ({} more keys need trust)", n - 1),
    })
}

/// The SHA-256 of a configuration's bytes, in lowercase hex.
pub fn content_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One trusted configuration: its absolute path and the hash of the content trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The configuration file, absolute and canonical.
    pub path: PathBuf,
    /// SHA-256 of its content when it was trusted.
    pub sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RecordsFile {
    #[serde(default)]
    trusted: Vec<TrustRecord>,
}

/// The records of `promptforge trust`, in `$XDG_STATE_HOME/promptforge/trusted.json`
/// (else `~/.local/state/promptforge/trusted.json`).
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

impl TrustStore {
    /// The store at `file`.
    pub fn at(file: PathBuf) -> Self {
        TrustStore { file }
    }

    /// The user's store, from `$XDG_STATE_HOME` or `$HOME`; None without either.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let state = match (var("XDG_STATE_HOME"), var("HOME")) {
            (Some(state), _) => PathBuf::from(state),
            (None, Some(home)) => PathBuf::from(home).join(".local").join("state"),
            (None, None) => return None,
        };
        Some(TrustStore::at(state.join("promptforge").join(RECORDS_FILE)))
    }

    /// The records file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Every record (none when the file does not exist; an unreadable or damaged
    /// file is an error, so nothing is silently forgotten).
    pub fn list(&self) -> Result<Vec<TrustRecord>, String> {
        match std::fs::metadata(&self.file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            _ => {}
        }
        let text = crate::user_file::read_to_string(&self.file)
            .map_err(|e| format!("{}: cannot be read: {e}", self.file.display()))?;
        let records: RecordsFile = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}: not a trust records file (expected {{\"trusted\": [{{\"path\", \"sha256\"}}]}})",
                self.file.display(),
                e.line()
            )
        })?;
        Ok(records.trusted)
    }

    /// True when `path` is recorded with the hash of `text`.
    pub fn trusts(&self, path: &Path, text: &str) -> bool {
        let Ok(path) = std::fs::canonicalize(path) else {
            return false;
        };
        let hash = content_hash(text);
        self.list()
            .unwrap_or_default()
            .iter()
            .any(|r| r.path == path && r.sha256 == hash)
    }

    /// Records `path` as trusted with the hash of `text` (replacing an older record).
    pub fn trust(&self, path: &Path, text: &str) -> Result<TrustRecord, String> {
        let path = std::fs::canonicalize(path)
            .map_err(|e| format!("{}: cannot be read: {e}", path.display()))?;
        let record = TrustRecord {
            path,
            sha256: content_hash(text),
        };
        self.updating(|| {
            let mut records = self.list()?;
            records.retain(|r| r.path != record.path);
            records.push(record.clone());
            self.save(records)
        })?;
        Ok(record)
    }

    /// Forgets `path`; false when it was not recorded.
    pub fn revoke(&self, path: &Path) -> Result<bool, String> {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.updating(|| {
            let mut records = self.list()?;
            let before = records.len();
            records.retain(|r| r.path != path);
            if records.len() == before {
                return Ok(false);
            }
            self.save(records)?;
            Ok(true)
        })
    }

    /// Runs `update` (a read of the records, then their replacement) holding an
    /// exclusive lock on the records' lock file (`FILE.lock` beside them), so
    /// that two `promptforge trust` at once cannot lose one's record: without
    /// it, each read the records before the other wrote.
    fn updating<T>(&self, update: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
        let fail = |e: std::io::Error| format!("{}: cannot be locked: {e}", self.file.display());
        if let Some(folder) = self.file.parent() {
            std::fs::create_dir_all(folder).map_err(fail)?;
        }
        let mut lock_path = self.file.clone().into_os_string();
        lock_path.push(".lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lock_path)
            .map_err(fail)?;
        lock.lock().map_err(fail)?;
        // The lock is released when the file closes, however `update` ends.
        update()
    }

    fn save(&self, trusted: Vec<TrustRecord>) -> Result<(), String> {
        let text = serde_json::to_string_pretty(&RecordsFile { trusted })
            .map_err(|e| format!("cannot write the trust records: {e}"))?;
        let fail = |e: std::io::Error| format!("{}: cannot be written: {e}", self.file.display());
        if let Some(folder) = self.file.parent() {
            std::fs::create_dir_all(folder).map_err(fail)?;
        }
        crate::atomic_file::replace_at(&self.file, format!("{text}\n").as_bytes()).map_err(fail)
    }
}

/// Who is trusted in one invocation or session.
#[derive(Debug, Clone)]
pub enum TrustPolicy {
    /// Every project configuration (`--trust`, `PROMPTFORGE_TRUST=1`, an editor's
    /// trusted workspace).
    All,
    /// The configurations recorded by `promptforge trust` (none without a store).
    Recorded(Option<TrustStore>),
    /// No project configuration (an editor's Restricted Mode).
    Nothing,
}

impl TrustPolicy {
    /// The command line's policy: everything with `--trust` or
    /// `PROMPTFORGE_TRUST=1`, else the user's records.
    pub fn from_env(trust_flag: bool) -> Self {
        let from_env = std::env::var(TRUST_ENV).is_ok_and(|v| v == "1");
        if trust_flag || from_env {
            TrustPolicy::All
        } else {
            TrustPolicy::Recorded(TrustStore::from_env())
        }
    }

    /// True when the project configuration at `path` with content `text` is trusted.
    pub fn trusts(&self, path: &Path, text: &str) -> bool {
        match self {
            TrustPolicy::All => true,
            TrustPolicy::Recorded(Some(store)) => store.trusts(path, text),
            TrustPolicy::Recorded(None) | TrustPolicy::Nothing => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(act: Act) -> TrustNeed {
        TrustNeed {
            file: PathBuf::from("repo/promptforge.toml"),
            line: Some(3),
            key: "plugin.\"evil/mcp\".command".to_owned(),
            part: Part::Plugin("evil/mcp".to_owned()),
            act,
        }
    }

    #[test]
    fn the_refusal_names_the_file_the_line_the_key_and_the_remedy() {
        assert_eq!(
            need(Act::StartProgram).to_string(),
            "repo/promptforge.toml:3: plugin.\"evil/mcp\".command would start a program, and this configuration is not trusted; review it, then run: promptforge trust repo"
        );
        let mut spaced = need(Act::HandVariable {
            variable: "AWS_SECRET_ACCESS_KEY".to_owned(),
        });
        spaced.file = PathBuf::from("my repo/promptforge.toml");
        spaced.line = None;
        assert_eq!(
            refusal(&[spaced, need(Act::ReadOutside)]).unwrap(),
            "my repo/promptforge.toml: plugin.\"evil/mcp\".command would hand the environment variable \"AWS_SECRET_ACCESS_KEY\" to a server or program, and this configuration is not trusted; review it, then run: promptforge trust 'my repo' (1 more keys need trust)"
        );
        assert_eq!(refusal(&[]), None);
    }

    #[test]
    fn a_record_holds_the_path_and_the_content_hash() {
        let root = std::env::temp_dir().join(format!("pf-trust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let config = root.join("promptforge.toml");
        std::fs::write(&config, "[limits]\n").unwrap();
        let store = TrustStore::at(root.join("state/promptforge/trusted.json"));
        assert!(store.list().unwrap().is_empty());
        assert!(!store.trusts(&config, "[limits]\n"));
        store.trust(&config, "[limits]\n").unwrap();
        assert!(store.trusts(&config, "[limits]\n"));
        // An edited file needs trusting again.
        assert!(!store.trusts(&config, "[limits]\ncall_depth = 2\n"));
        store.trust(&config, "[limits]\n").unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
        assert!(store.revoke(&config).unwrap());
        assert!(!store.revoke(&config).unwrap());
        assert!(!store.trusts(&config, "[limits]\n"));
        std::fs::write(store.file(), "not json").unwrap();
        assert!(store
            .list()
            .unwrap_err()
            .contains("not a trust records file"));
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Trusting at once from many threads (as from many processes: the lock is
    /// the file's) loses no record.
    #[test]
    fn records_trusted_at_once_are_all_kept() {
        let root = std::env::temp_dir().join(format!("pf-trust-at-once-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let file = root.join("state/promptforge/trusted.json");
        let configs: Vec<PathBuf> = (0..16)
            .map(|i| {
                let config = root.join(format!("c{i}.toml"));
                std::fs::write(&config, "").unwrap();
                config
            })
            .collect();
        for _round in 0..4 {
            std::thread::scope(|scope| {
                for config in &configs {
                    let store = TrustStore::at(file.clone());
                    scope.spawn(move || store.trust(config, "").unwrap());
                }
            });
            let store = TrustStore::at(file.clone());
            assert_eq!(store.list().unwrap().len(), configs.len());
            std::thread::scope(|scope| {
                for config in &configs {
                    let store = TrustStore::at(file.clone());
                    scope.spawn(move || assert!(store.revoke(config).unwrap()));
                }
            });
            assert!(store.list().unwrap().is_empty());
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_hash_is_sha256() {
        assert_eq!(
            content_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
