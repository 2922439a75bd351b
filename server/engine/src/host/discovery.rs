//! Where the configuration comes from (`host.md` §1, §1.1): a file named
//! explicitly (`--config`, `$PROMPTFORGE_CONFIG`) alone; else the nearest
//! `promptforge.toml` upward from the prompt's folder laid over the user's own
//! file. A project file owned by another user, or in a folder others can write, is
//! skipped; a project file that is not trusted has its acting keys found.

use std::path::{Path, PathBuf};

use super::config::{read_text, Config, ConfigError};
use super::layers::{self, Layer};
use super::trust::{self, TrustNeed, TrustPolicy};

/// The file name searched from the prompt's folder upward.
pub const PROJECT_FILE: &str = "promptforge.toml";

/// The environment variable naming a configuration file.
pub const CONFIG_ENV: &str = "PROMPTFORGE_CONFIG";

/// Where configuration is looked for, in `host.md` §1's order.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// `--config FILE`.
    pub explicit: Option<PathBuf>,
    /// `$PROMPTFORGE_CONFIG`.
    pub env_file: Option<PathBuf>,
    /// The prompt's folder (the search for `promptforge.toml` goes upward from it).
    pub prompt_dir: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
}

/// The files found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Found {
    /// A file named explicitly (`--config`, else `$PROMPTFORGE_CONFIG`): read alone.
    pub explicit: Option<PathBuf>,
    /// The nearest project file upward that may be read.
    pub project: Option<PathBuf>,
    /// The user's own file.
    pub user: Option<PathBuf>,
    /// Project files passed over, each with the one line that says why.
    pub skipped: Vec<String>,
}

impl Found {
    /// The file whose keys win: the explicit one, else the project's, else the user's.
    pub fn top(&self) -> Option<&Path> {
        self.explicit
            .as_deref()
            .or(self.project.as_deref())
            .or(self.user.as_deref())
    }
}

/// A configuration found and read.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Every key of every file read.
    pub config: Config,
    /// The acting keys of a project file that is not trusted.
    pub untrusted: Vec<TrustNeed>,
    /// The configuration with those keys withheld (what the language server uses).
    pub withheld: Config,
    /// Project files passed over, each with the one line that says why.
    pub skipped: Vec<String>,
}

impl Loaded {
    /// The configuration, or the refusal of its first key that needs trust.
    pub fn trusted_config(self) -> Result<Config, String> {
        match trust::refusal(&self.untrusted) {
            Some(refusal) => Err(refusal),
            None => Ok(self.config),
        }
    }
}

impl Discovery {
    /// Discovery from the process environment.
    pub fn from_env(explicit: Option<PathBuf>, prompt_dir: Option<PathBuf>) -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Discovery {
            explicit,
            env_file: var(CONFIG_ENV),
            prompt_dir,
            xdg_config_home: var("XDG_CONFIG_HOME"),
            home: var("HOME"),
        }
    }

    /// The files to read.
    pub fn find(&self) -> Found {
        if let Some(explicit) = self.explicit.as_ref().or(self.env_file.as_ref()) {
            return Found {
                explicit: Some(explicit.clone()),
                ..Found::default()
            };
        }
        let mut found = Found::default();
        if let Some(dir) = &self.prompt_dir {
            let start = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            for folder in start.ancestors() {
                let candidate = folder.join(PROJECT_FILE);
                if !candidate.is_file() {
                    continue;
                }
                match unsafe_reason(&candidate) {
                    Some(reason) => found.skipped.push(format!(
                        "skipping {}: {reason} (name it with --config to use it)",
                        candidate.display()
                    )),
                    None => {
                        found.project = Some(candidate);
                        break;
                    }
                }
            }
        }
        let user = match (&self.xdg_config_home, &self.home) {
            (Some(xdg), _) => Some(xdg.join("promptforge").join("config.toml")),
            (None, Some(home)) => {
                Some(home.join(".config").join("promptforge").join("config.toml"))
            }
            (None, None) => None,
        };
        found.user = user.filter(|file| file.is_file());
        found
    }

    /// Finds, reads and merges the configuration (the built-in defaults when there
    /// is none); the project file is trusted as `policy` says.
    pub fn load(&self, policy: &TrustPolicy) -> Result<Loaded, ConfigError> {
        load_found(self.find(), policy)
    }
}

/// Reads and merges the files `found` names.
pub fn load_found(found: Found, policy: &TrustPolicy) -> Result<Loaded, ConfigError> {
    let skipped = found.skipped.clone();
    let plain = |config: Config| Loaded {
        withheld: config.clone(),
        config,
        untrusted: Vec::new(),
        skipped: skipped.clone(),
    };
    if let Some(explicit) = &found.explicit {
        return Config::load(explicit).map(plain);
    }
    let user = match &found.user {
        Some(path) => Some(Layer::parse(&read_text(path)?, path, true)?),
        None => None,
    };
    let Some(project) = &found.project else {
        return Ok(match user {
            Some(user) => plain(layers::merge(None, &user)?.config),
            None => plain(Config::default()),
        });
    };
    let text = read_text(project)?;
    let trusted = policy.trusts(project, &text);
    let top = Layer::parse(&text, project, trusted)?;
    let merged = layers::merge(user.as_ref(), &top)?;
    let untrusted = merged.untrusted.clone();
    let config = merged.config.clone();
    let withheld = layers::withhold(user.as_ref(), &top, merged)?;
    Ok(Loaded {
        config,
        untrusted,
        withheld,
        skipped,
    })
}

/// Why a project file must not be read, when it must not: owned by another user,
/// or in a folder others can write that has no sticky bit.
#[cfg(unix)]
fn unsafe_reason(file: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    let metadata = std::fs::metadata(file).ok()?;
    if metadata.uid() != me {
        return Some(format!("owned by another user (uid {})", metadata.uid()));
    }
    let folder = file.parent()?;
    let mode = std::fs::metadata(folder).ok()?.mode();
    let others_write = mode & 0o002 != 0;
    let sticky = mode & 0o1000 != 0;
    (others_write && !sticky).then(|| format!("{} can be written by other users", folder.display()))
}

#[cfg(not(unix))]
fn unsafe_reason(_file: &Path) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::trust::Part;

    #[test]
    fn discovery_order() {
        let root =
            std::env::temp_dir().join(format!("promptforge-discovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let prompts = root.join("project/prompts/deep");
        std::fs::create_dir_all(&prompts).unwrap();
        std::fs::create_dir_all(root.join("xdg/promptforge")).unwrap();
        std::fs::create_dir_all(root.join("home/.config/promptforge")).unwrap();
        std::fs::write(root.join("xdg/promptforge/config.toml"), "").unwrap();
        std::fs::write(root.join("home/.config/promptforge/config.toml"), "").unwrap();
        let mut discovery = Discovery {
            explicit: None,
            env_file: None,
            prompt_dir: Some(prompts.clone()),
            xdg_config_home: Some(root.join("xdg")),
            home: Some(root.join("home")),
        };
        assert_eq!(
            discovery.find().top(),
            Some(root.join("xdg/promptforge/config.toml").as_path())
        );
        discovery.xdg_config_home = None;
        let user = root.join("home/.config/promptforge/config.toml");
        assert_eq!(discovery.find().top(), Some(user.as_path()));
        std::fs::write(root.join("project/promptforge.toml"), "").unwrap();
        let found = discovery.find();
        assert!(found.top().unwrap().ends_with("project/promptforge.toml"));
        // The user's file lies under the project's.
        assert_eq!(found.user.as_deref(), Some(user.as_path()));
        discovery.env_file = Some(root.join("env.toml"));
        assert_eq!(
            discovery.find().top(),
            Some(root.join("env.toml").as_path())
        );
        discovery.explicit = Some(root.join("explicit.toml"));
        assert_eq!(
            discovery.find(),
            Found {
                explicit: Some(root.join("explicit.toml")),
                ..Found::default()
            }
        );
        let missing = discovery.load(&TrustPolicy::Nothing).unwrap_err();
        assert!(missing
            .to_string()
            .contains("explicit.toml: cannot be read"));
        let none = Discovery::default();
        assert_eq!(
            none.load(&TrustPolicy::Nothing).unwrap().config,
            Config::default()
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_project_points_a_model_at_this_machine_untrusted_and_nowhere_else() {
        let root = std::env::temp_dir().join(format!("pf-base-url-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("repo/prompts")).unwrap();
        std::fs::create_dir_all(root.join("xdg/promptforge")).unwrap();
        std::fs::write(
            root.join("xdg/promptforge/config.toml"),
            "[model.mine]\nprovider = \"openai\"\nbase_url = \"https://api.example/v1\"\napi_key_env = \"MY_KEY\"\n",
        )
        .unwrap();
        let discovery = Discovery {
            prompt_dir: Some(root.join("repo/prompts")),
            xdg_config_home: Some(root.join("xdg")),
            ..Discovery::default()
        };
        let project = |text: &str| std::fs::write(root.join("repo").join(PROJECT_FILE), text);
        // A newcomer's local model, and the user's model renamed: data.
        project("default_model = \"local\"\n\n[model.local]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\n\n[model.mine]\nmodel = \"other\"\n").unwrap();
        let loaded = discovery.load(&TrustPolicy::Nothing).unwrap();
        assert_eq!(loaded.untrusted, []);
        let config = loaded.trusted_config().unwrap();
        assert_eq!(
            config.models["mine"].base_url.as_deref(),
            Some("https://api.example/v1")
        );
        // A model sent off this machine, with no key: refused, the model withheld.
        project("\n[model.far]\nprovider = \"openai\"\nbase_url = \"https://models.example/v1\"\n")
            .unwrap();
        let loaded = discovery.load(&TrustPolicy::Nothing).unwrap();
        assert!(loaded
            .withheld
            .withheld(&Part::Model("far".into()))
            .is_some());
        assert_eq!(
            loaded.trusted_config().unwrap_err(),
            format!(
                "{}:4: model.far.base_url would send the model's requests (prompts, tool results) to a server it names, off this machine, and this configuration is not trusted; review it, then run: promptforge trust {}",
                root.join("repo").join(PROJECT_FILE).display(),
                root.join("repo").display()
            )
        );
        // The user's key pointed at this machine: refused all the same.
        project("[model.mine]\nbase_url = \"http://localhost:9/v1\"\n").unwrap();
        let refusal = discovery
            .load(&TrustPolicy::Nothing)
            .unwrap()
            .trusted_config()
            .unwrap_err();
        assert!(
            refusal.contains(":2: model.mine.base_url would send the key in \"MY_KEY\" (named by your own configuration) to a server it names"),
            "{refusal}"
        );
        // Trusted, both apply.
        let config = discovery
            .load(&TrustPolicy::All)
            .unwrap()
            .trusted_config()
            .unwrap();
        assert_eq!(
            config.models["mine"].base_url.as_deref(),
            Some("http://localhost:9/v1")
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[cfg(unix)]
    #[test]
    fn a_project_file_in_a_folder_others_can_write_is_skipped() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("pf-shared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let prompts = root.join("prompts");
        std::fs::create_dir_all(&prompts).unwrap();
        std::fs::write(root.join(PROJECT_FILE), "default_model = \"x\"\n").unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
        let discovery = Discovery {
            prompt_dir: Some(prompts.clone()),
            ..Discovery::default()
        };
        let found = discovery.find();
        assert_eq!(found.project, None);
        assert_eq!(
            found.skipped,
            [format!(
                "skipping {}: {} can be written by other users (name it with --config to use it)",
                root.join(PROJECT_FILE).display(),
                root.display()
            )]
        );
        // With the sticky bit (as /tmp has), others cannot replace the owner's file.
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(discovery.find().project, Some(root.join(PROJECT_FILE)));
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A file owned by someone else (only root can make one here).
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(root.join(PROJECT_FILE), Some(65534), None).unwrap();
            let found = discovery.find();
            assert_eq!(found.project, None);
            assert_eq!(
                found.skipped,
                [format!(
                    "skipping {}: owned by another user (uid 65534) (name it with --config to use it)",
                    root.join(PROJECT_FILE).display()
                )]
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
