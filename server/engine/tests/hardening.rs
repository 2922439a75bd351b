//! Hostile prompts (issue 9): the store never reaches outside `--store DIR`,
//! finalizers cannot escape the budget, host-side memory is bounded, limits pass
//! through `coroutine.resume` and `__tostring`, argument errors have their line,
//! and `store.list` patterns cannot backtrack.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::host::Limits;
use promptforge_engine::testing::*;
use promptforge_engine::{Host, RunOptions, Store};

/// The line of the run error (a section block's code starts on file line 12).
fn error_line(outcome: &promptforge_engine::Outcome) -> Option<u32> {
    outcome
        .error
        .as_ref()
        .and_then(|e| e.position)
        .map(|p| p.line)
}

/// A fresh folder under the system's temporary folder.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "promptforge-hardening-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A store folder `DIR` holding the links `etc -> OUT`, `out -> OUT/sub` and
/// `link.txt -> OUT/secret.txt`, where `OUT` holds `secret.txt` and `sub/`.
fn linked_store(name: &str) -> (PathBuf, PathBuf) {
    let base = temp_dir(name);
    let (dir, out) = (base.join("store"), base.join("outside"));
    std::fs::create_dir_all(out.join("sub")).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(out.join("secret.txt"), "host secret\n").unwrap();
    std::fs::write(dir.join("inside.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink(&out, dir.join("etc")).unwrap();
    std::os::unix::fs::symlink(out.join("sub"), dir.join("out")).unwrap();
    std::os::unix::fs::symlink(out.join("secret.txt"), dir.join("link.txt")).unwrap();
    (dir, out)
}

fn run_in_store(code: &str, dir: &Path) -> promptforge_engine::Outcome {
    run_with(
        &section(code),
        Host::offline(),
        Arc::new(Store::directory(dir).unwrap()),
        RunOptions::default(),
    )
}

/// Each operation, caught by pcall: `kind: message` per line.
const EVERY_OPERATION: &str = r#"
local lines = {}
local function try(name, f, ...)
  local ok, e = pcall(f, ...)
  if ok then lines[#lines + 1] = name .. ' ok ' .. tostring(e)
  else lines[#lines + 1] = name .. ' ' .. e.kind .. ': ' .. tostring(e) end
end
try('read', store.read, 'etc/secret.txt')
try('exists', store.exists, 'etc/secret.txt')
try('delete', store.delete, 'etc/secret.txt')
try('write', store.write, 'out/pwned.txt', 'x')
try('append', store.append, 'out/pwned.txt', 'x')
try('read-link', store.read, 'link.txt')
try('write-link', store.write, 'link.txt', 'overwritten')
try('append-link', store.append, 'link.txt', 'more')
try('exists-link', store.exists, 'link.txt')
try('delete-link', store.delete, 'link.txt')
lines[#lines + 1] = 'list ' .. table.concat(store.list('**'), ',')
lines[#lines + 1] = 'inside ' .. store.read('inside.txt')
return table.concat(lines, '\n')
"#;

#[test]
fn store_symlinks_never_lead_outside_the_store_folder() {
    let (dir, out) = linked_store("links");
    let outcome = run_in_store(EVERY_OPERATION, &dir);
    let refused = |op: &str, path: &str, link: &str| {
        format!("{op} store: invalid store path \"{path}\": \"{link}\" is a symbolic link, and the store never follows links")
    };
    let expected = [
        refused("read", "etc/secret.txt", "etc"),
        refused("exists", "etc/secret.txt", "etc"),
        refused("delete", "etc/secret.txt", "etc"),
        refused("write", "out/pwned.txt", "out"),
        refused("append", "out/pwned.txt", "out"),
        refused("read-link", "link.txt", "link.txt"),
        refused("write-link", "link.txt", "link.txt"),
        refused("append-link", "link.txt", "link.txt"),
        refused("exists-link", "link.txt", "link.txt"),
        refused("delete-link", "link.txt", "link.txt"),
        "list inside.txt".to_owned(),
        "inside mine\n".to_owned(),
    ]
    .join("\n");
    assert_eq!(result(&outcome).unwrap(), expected);
    // Nothing outside changed.
    assert_eq!(
        std::fs::read_to_string(out.join("secret.txt")).unwrap(),
        "host secret\n"
    );
    assert!(!out.join("sub/pwned.txt").exists());
    assert!(dir.join("link.txt").is_symlink());
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn a_store_folder_swapped_for_a_link_mid_run_is_refused() {
    let base = temp_dir("swap");
    let (dir, out) = (base.join("store"), base.join("outside"));
    std::fs::create_dir_all(&out).unwrap();
    let store = Store::directory(&dir).unwrap();
    store.write("notes/a.md", "one").unwrap();
    std::fs::remove_dir_all(dir.join("notes")).unwrap();
    std::os::unix::fs::symlink(&out, dir.join("notes")).unwrap();
    let error = store.write("notes/a.md", "two").unwrap_err();
    assert_eq!(
        error.message,
        "invalid store path \"notes/a.md\": \"notes\" is a symbolic link, and the store never follows links"
    );
    assert!(!out.join("a.md").exists());
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_finalizer_that_never_ends_is_refused_and_the_run_ends_in_time() {
    let started = Instant::now();
    let outcome = run(
        "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# Title\n\n## Main\n\n```lua\nlocal x = 1\nsetmetatable({}, {__gc = function() while true do end end})\nreturn 'escaped'\n```\n",
        "",
    );
    assert_eq!(
        error(&outcome),
        (
            "Lua".into(),
            "setmetatable: __gc metamethods are not available in prompts (finalizers would run outside the instruction budget)".into()
        )
    );
    assert_eq!(error_line(&outcome), Some(13));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_finalizer_over_the_budget_is_refused() {
    let host = limited(Limits {
        lua_instructions: 1_000_000,
        ..Limits::default()
    });
    let code = "local t = setmetatable({}, {__gc = function() local n = 0 for i = 1, 1.2e9 do n = n + 1 end end})\nt = nil\nreturn 'escaped'";
    let started = Instant::now();
    let outcome = run_on(&section(code), host, "", None);
    assert_eq!(error(&outcome).0, "Lua");
    assert!(error(&outcome).1.starts_with("setmetatable: __gc"));
    assert!(started.elapsed() < Duration::from_secs(10));
    // Metatables without __gc still work.
    let ok = run(
        &section("local t = setmetatable({}, {__index = function(_, k) return k .. '!' end})\nreturn t.hi"),
        "",
    );
    assert_eq!(result(&ok).as_deref(), Some("hi!"));
}

#[test]
fn the_run_log_is_bounded_by_log_bytes() {
    let host = limited(Limits {
        log_bytes: 1000,
        ..Limits::default()
    });
    let code =
        "pcall(function() for i = 1, 100 do log(string.rep('x', 36)) end end)\nreturn 'escaped'";
    let outcome = run_on(&section(code), host, "", None);
    assert_eq!(
        error(&outcome),
        (
            "Limit".into(),
            "run log limit of 1000 bytes exceeded".into()
        )
    );
    // Ten lines of 36 bytes, each with the 64 the host keeps for any line, fit
    // exactly.
    assert_eq!(outcome.log.len(), 10);
}

#[test]
fn each_log_line_counts_what_the_host_keeps_for_it() {
    let host = limited(Limits {
        log_bytes: 6400,
        ..Limits::default()
    });
    let outcome = run_on(&section("while true do log('') end"), host, "", None);
    assert_eq!(
        error(&outcome),
        (
            "Limit".into(),
            "run log limit of 6400 bytes exceeded".into()
        )
    );
    // An empty line costs the 64 bytes the host keeps for any line.
    assert_eq!(outcome.log.len(), 100);
}

#[test]
fn the_default_log_limit_stops_a_log_bomb() {
    let code = "for i = 1, 40 do log(string.rep('x', 16 * 1024 * 1024)) end\nreturn 'escaped'";
    let outcome = run(&section(code), "");
    assert_eq!(
        error(&outcome),
        (
            "Limit".into(),
            "run log limit of 16777216 bytes exceeded".into()
        )
    );
    assert!(outcome.log.is_empty());
}

#[test]
fn the_in_memory_store_is_bounded_by_bytes_and_files() {
    let host = || {
        limited(Limits {
            store_bytes: 1000,
            store_files: 3,
            ..Limits::default()
        })
    };
    let bytes = "for i = 1, 20 do store.write('same.md', string.rep('x', 900)) end\nstore.append('same.md', string.rep('y', 100))\npcall(store.append, 'same.md', 'z')\nreturn 'escaped'";
    assert_eq!(
        error(&run_on(&section(bytes), host(), "", None)),
        ("Limit".into(), "store limit of 1000 bytes exceeded".into())
    );
    let files = "for i = 1, 3 do store.write(i .. '.md', 'x') end\nstore.delete('1.md')\nstore.write('4.md', 'x')\npcall(store.write, '5.md', 'x')\nreturn 'escaped'";
    assert_eq!(
        error(&run_on(&section(files), host(), "", None)),
        ("Limit".into(), "store limit of 3 files exceeded".into())
    );
}

#[test]
fn the_default_store_limit_stops_a_store_bomb() {
    let code = "for i = 1, 40 do store.write(i .. '.bin', string.rep('x', 16 * 1024 * 1024)) end\nreturn 'escaped'";
    assert_eq!(
        error(&run(&section(code), "")),
        (
            "Limit".into(),
            "store limit of 268435456 bytes exceeded".into()
        )
    );
}

#[test]
fn the_memory_limit_passes_through_coroutine_resume() {
    let host = limited(Limits {
        lua_memory_mib: 4,
        ..Limits::default()
    });
    let code = "local co = coroutine.create(function() local t = {} for i = 1, 1e8 do t[i] = string.rep('x', 64) .. i end end)\nlocal ok, e = coroutine.resume(co)\nreturn 'escaped: ' .. tostring(ok) .. ' ' .. tostring(e)";
    assert_eq!(
        error(&run_on(&section(code), host, "", None)),
        ("Limit".into(), "Lua memory limit of 4 MiB exceeded".into())
    );
}

#[test]
fn the_budget_passes_through_tostring_metamethods() {
    let host = || {
        limited(Limits {
            lua_instructions: 100_000,
            ..Limits::default()
        })
    };
    let budget = (
        "Limit".to_owned(),
        "Lua instruction budget of 100000 exceeded".to_owned(),
    );
    let raised = "error(setmetatable({}, {__tostring = function() while true do end end}))";
    assert_eq!(error(&run_on(&section(raised), host(), "", None)), budget);
    let logged =
        "log(setmetatable({}, {__tostring = function() while true do end end}))\nreturn 'escaped'";
    assert_eq!(error(&run_on(&section(logged), host(), "", None)), budget);
}

#[test]
fn argument_errors_of_suspending_calls_have_the_line_of_the_call() {
    for (code, message) in [
        (
            "call(42)",
            "call target must be a string such as '## Name', got integer",
        ),
        (
            "input.ask(42)",
            "input.ask expects a question string, got integer",
        ),
    ] {
        let outcome = run(&section(&format!("local x = 1\n{code}")), "");
        assert_eq!(error(&outcome), ("Lua".into(), message.into()), "{code}");
        assert_eq!(error_line(&outcome), Some(13), "{code}");
    }
    let models = "---\nname: p\ndescription: d\npromptforge: 0\nmodels:\n  m: {}\n---\n\n# Title\n\n## Main\n\n```lua\nlocal x = 1\nmodels.infer(42)\n```\n";
    let outcome = run(models, "");
    assert_eq!(error(&outcome).0, "Lua");
    assert_eq!(error_line(&outcome), Some(15), "{:?}", outcome.error);
    // In a function of the shared library: the line of the call inside it.
    let shared = |body: &str| {
        format!("---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# T\n\n```lua shared\nfunction f()\n  {body}\nend\n```\n\n## Main\n\n```lua\nlocal x = 1\nreturn f()\n```\n")
    };
    let outcome = run(&shared("local a = input.ask(42) return a"), "");
    assert_eq!(error_line(&outcome), Some(11), "{:?}", outcome.error);
    // Calls in tail position replace their caller's frame (Lua 5.4 itself keeps no
    // trace of it): the error then has the line of the block that was running.
    let outcome = run(&shared("return input.ask(42)"), "");
    assert_eq!(error_line(&outcome), Some(18), "{:?}", outcome.error);
    // In a fanout arm: the arm's own line.
    let arm = "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# T\n\n## Main\n\n```lua\nlocal x = 1\nreturn fanout('## A', {1})\n```\n\n## A\n\n```lua\nlocal y = 2\nlocal r = call(5)\nreturn r\n```\n";
    let outcome = run(arm, "");
    assert_eq!(error_line(&outcome), Some(20), "{:?}", outcome.error);
    let outcome = run(&section("local x = 1\ntools.call(42)"), "");
    assert_eq!(error(&outcome).0, "Lua");
    assert_eq!(error_line(&outcome), Some(13), "{:?}", outcome.error);
}

#[test]
fn a_backtracking_pattern_lists_in_linear_time() {
    let code = "for i = 1, 50 do store.write(string.rep('a', 40) .. i, 'x') end\nlocal found = store.list(string.rep('*a', 12) .. 'b')\nreturn #found";
    let started = Instant::now();
    assert_eq!(result(&run(&section(code), "")).as_deref(), Some("0"));
    assert!(started.elapsed() < Duration::from_secs(5));
    let long = "local ok, e = pcall(store.list, string.rep('*', 1025))\nreturn e.kind .. ': ' .. tostring(e)";
    assert_eq!(
        result(&run(&section(long), "")).as_deref(),
        Some("store: invalid store pattern: the pattern is longer than 1024 bytes")
    );
}

#[test]
fn a_cancelled_listing_stops() {
    let store = Store::in_memory();
    for i in 0..100 {
        store.write(&format!("{i}.md"), "x").unwrap();
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let error = store.list_until(Some("**"), &cancel).unwrap_err();
    assert_eq!(error.message, "the run was cancelled");
}

/// A complexity guard, not a timing test (the figures come from `benches/scale.rs`):
/// 50,000 model labels and 50,000 missing Plugins took minutes when a step was
/// quadratic; linear, each is a few seconds even in a debug build.
#[test]
fn many_labels_and_plugins_stay_linear() {
    use std::fmt::Write;
    let mut labels = String::from("models:\n");
    let mut plugins = String::from("plugins:\n");
    for i in 0..50_000 {
        let _ = writeln!(labels, "  m{i}: {{}}");
        let _ = writeln!(plugins, "  - acme/p{i}");
    }
    let started = Instant::now();
    let outcome = run(
        &prompt(
            &labels,
            &format!("## Main\n\n{}", lua("return m49999.name")),
        ),
        "",
    );
    assert_eq!(result(&outcome).as_deref(), Some("m49999"));
    let refused = run(&prompt(&plugins, "## Main\n\n"), "");
    assert_eq!(error(&refused).1.lines().count(), 50_001);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn message_list_texts_count_against_the_memory_ceiling() {
    let host = limited(Limits {
        lua_memory_mib: 8,
        ..Limits::default()
    });
    let code = "local msgs = messages.new()\nlocal chunk = string.rep('x', 1024 * 1024)\npcall(function() for i = 1, 100 do msgs:user(chunk) end end)\nreturn 'escaped'";
    assert_eq!(
        error(&run_on(&section(code), host, "", None)),
        ("Limit".into(), "Lua memory limit of 8 MiB exceeded".into())
    );
}

#[test]
fn fanout_results_count_against_the_callers_memory_ceiling() {
    // 400 arms of 1 MiB each: the results would pile up in host memory; counted
    // against the caller's 8 MiB ceiling, the fanout stops after a few of them.
    let host = limited(Limits {
        lua_memory_mib: 8,
        fanout_concurrency: 2,
        ..Limits::default()
    });
    let body = format!(
        "## Main\n\n{}## Arm\n\n---\n\n{}",
        lua("local members = {}\nfor i = 1, 400 do members[i] = i end\nlocal r = fanout('## Arm', members)\nreturn #r"),
        lua("store.append('ran.txt', 'x')\nreturn string.rep('x', 1024 * 1024)")
    );
    let store = Arc::new(Store::in_memory());
    let outcome = run_with(
        &prompt("", &body),
        host,
        store.clone(),
        RunOptions::default(),
    );
    assert_eq!(
        error(&outcome),
        ("Limit".into(), "Lua memory limit of 8 MiB exceeded".into())
    );
    let ran = store.read("ran.txt", None, None).unwrap().len();
    assert!(ran < 20, "{ran} arms ran");
}
