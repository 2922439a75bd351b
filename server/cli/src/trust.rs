//! `promptforge trust [DIR]`, `--list`, `--revoke` (`host.md` §1.1): shows what
//! a repository's configuration will do once trusted, then records its path and
//! content hash; lists and forgets the records.

use std::path::{Path, PathBuf};

use promptforge_engine::host::discovery::PROJECT_FILE;
use promptforge_engine::host::layers::{merge, Layer};
use promptforge_engine::host::trust::{Act, Part, TrustNeed, TrustRecord, TrustStore};
use promptforge_engine::host::{Config, Discovery};

use crate::cli::TrustArgs;
use crate::exit::Exit;

/// Runs `promptforge trust`.
pub fn run(args: &TrustArgs) -> Exit {
    let Some(store) = TrustStore::from_env() else {
        eprintln!("promptforge: neither XDG_STATE_HOME nor HOME is set: there is nowhere to keep the trust records");
        return Exit::Usage;
    };
    let outcome = if args.list {
        list(&store)
    } else if args.revoke {
        revoke(&store, &args.dir)
    } else {
        trust(&store, &args.dir)
    };
    match outcome {
        Ok(()) => Exit::Ok,
        Err(message) => {
            eprintln!("promptforge: {message}");
            Exit::Usage
        }
    }
}

/// The configuration `dir` names: the file itself, else the nearest
/// `promptforge.toml` from the folder upward (as a prompt there finds it).
fn configuration_of(dir: &Path) -> Result<PathBuf, String> {
    if dir.is_file() {
        return Ok(dir.to_path_buf());
    }
    if !dir.is_dir() {
        return Err(format!("{}: no such folder", dir.display()));
    }
    let discovery = Discovery {
        prompt_dir: Some(dir.to_path_buf()),
        ..Discovery::default()
    };
    let found = discovery.find();
    for skipped in &found.skipped {
        eprintln!("promptforge: {skipped}");
    }
    found.project.ok_or_else(|| {
        format!(
            "{}: no {PROJECT_FILE} there or above it that may be read",
            dir.display()
        )
    })
}

fn trust(store: &TrustStore, dir: &Path) -> Result<(), String> {
    let path = configuration_of(dir)?;
    let text = promptforge_engine::user_file::read_to_string(&path)
        .map_err(|e| format!("{}: cannot be read: {e}", path.display()))?;
    let user = Discovery::from_env(None, None).find().user;
    let user = match &user {
        Some(file) => {
            let text = promptforge_engine::user_file::read_to_string(file)
                .map_err(|e| format!("{}: cannot be read: {e}", file.display()))?;
            Some(Layer::parse(&text, file, true).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let layer = Layer::parse(&text, &path, false).map_err(|e| e.to_string())?;
    let merged = merge(user.as_ref(), &layer).map_err(|e| e.to_string())?;
    if merged.untrusted.is_empty() {
        println!(
            "{} acts on nothing that needs trust (it only holds data).",
            path.display()
        );
    } else {
        println!("{} will, once trusted:", path.display());
        for need in &merged.untrusted {
            println!("  {}", describe(need, &merged.config));
        }
    }
    let record = store.trust(&path, &text)?;
    println!("trusted: {}", shown(&record));
    Ok(())
}

/// One line of what a key will do, with the values a reviewer needs to see.
fn describe(need: &TrustNeed, config: &Config) -> String {
    let line = need.line.map(|l| format!("line {l}: ")).unwrap_or_default();
    let what = match (&need.part, &need.act) {
        (Part::Plugin(id), Act::StartProgram) => match config.plugins.get(id) {
            Some(plugin) => format!(
                "start the program {:?} with the arguments {:?}",
                plugin.command, plugin.args
            ),
            None => "start a program".to_owned(),
        },
        (_, Act::HandVariable { variable }) => {
            format!("hand the value of your environment variable {variable:?} to it")
        }
        (Part::Model(name), Act::RedirectKey { variable }) => format!(
            "send the key in {variable:?} to {:?}",
            config
                .models
                .get(name)
                .and_then(|m| m.base_url.clone())
                .unwrap_or_default()
        ),
        (_, Act::RedirectKey { variable }) => format!(
            "send the key in {variable:?} to {:?}",
            config.web.search_endpoint.clone().unwrap_or_default()
        ),
        (Part::Model(name), Act::SendModelRequests) => format!(
            "send the model's requests (prompts, tool results) to {:?}, which answers as the model",
            config
                .models
                .get(name)
                .and_then(|m| m.base_url.clone())
                .unwrap_or_default()
        ),
        (_, Act::SendModelRequests) => "send a model's requests off this machine".to_owned(),
        (_, Act::SendSearchQueries) => format!(
            "send search queries to {:?}",
            config.web.search_endpoint.clone().unwrap_or_default()
        ),
        (Part::Model(name), Act::ReadOutside) => format!(
            "read {:?}, outside its folder",
            config
                .models
                .get(name)
                .and_then(|m| m.path.clone())
                .unwrap_or_default()
        ),
        (_, Act::ReadOutside) => "read a file outside its folder".to_owned(),
        (_, Act::RaiseLimit { base }) => format!("raise the limit above {base}"),
        (_, Act::ReachPrivateAddresses) => {
            "let fetch reach loopback and private addresses".to_owned()
        }
        (_, Act::StartProgram) => "start a program".to_owned(),
        (_, Act::WriteOutside) => format!(
            "write live models' answers into {:?}, outside its folder",
            config.test.cache.clone().unwrap_or_default()
        ),
        (_, Act::SendTraces) => format!(
            "send every run's trace (prompts, replies, tool output) to {:?}",
            config.trace.otlp_endpoint.clone().unwrap_or_default()
        ),
    };
    format!("{line}{}: {what}", need.key)
}

fn shown(record: &TrustRecord) -> String {
    let short = record.sha256.get(..12).unwrap_or(&record.sha256);
    format!("{} (sha256 {short}…)", record.path.display())
}

fn list(store: &TrustStore) -> Result<(), String> {
    let records = store.list()?;
    if records.is_empty() {
        println!("no configuration is trusted ({})", store.file().display());
    }
    for record in records {
        let state = match promptforge_engine::user_file::read_to_string(&record.path) {
            Ok(text) if store.trusts(&record.path, &text) => "trusted",
            Ok(_) => "changed since: not trusted until trusted again",
            Err(_) => "missing",
        };
        println!("{}  {state}", shown(&record));
    }
    Ok(())
}

fn revoke(store: &TrustStore, dir: &Path) -> Result<(), String> {
    let path = configuration_of(dir).or_else(|error| {
        // A configuration deleted since can still be forgotten by its folder.
        let candidate = dir.join(PROJECT_FILE);
        let recorded = std::path::absolute(&candidate).unwrap_or(candidate);
        store
            .list()?
            .iter()
            .any(|r| r.path == recorded)
            .then_some(recorded)
            .ok_or(error)
    })?;
    if store.revoke(&path)? {
        println!("no longer trusted: {}", path.display());
    } else {
        println!("was not trusted: {}", path.display());
    }
    Ok(())
}
