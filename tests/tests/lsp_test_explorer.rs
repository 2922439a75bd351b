//! What an editor's test explorer reads (`editors.md`, "The Testing view"):
//! `promptforge/tests` lists the workspace's test files and their cases with
//! their ranges, and `caseFinished` carries each failure in parts.

mod lsp_run_support;

use lsp_run_support::*;
use promptforge_tests::lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};

const TESTED: &str = "cases:\n  - name: greets\n    args: \"world\"\n    model:\n      - text: \"hi world\"\n    expect:\n      result: \"hi world\"\n  - name: fails on purpose\n    model:\n      - text: \"nope\"\n    expect:\n      result: \"something else\"\n";

/// A server for the workspace at `scratch` (its `rootUri`), trusted.
fn start_in(scratch: &promptforge_tests::Scratch) -> LspClient {
    let no_user = scratch.path().join(".no-user-config");
    let no_user = no_user.display().to_string();
    let mut client = LspClient::start_with_env(&[("XDG_CONFIG_HOME", no_user.as_str())]);
    let root = format!("file://{}", scratch.path().display());
    client
        .request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root,
                "capabilities": {},
                "initializationOptions": { "trusted": true },
            }),
        )
        .expect("initialize succeeds");
    client.notify("initialized", json!({}));
    client
}

fn names(file: &Value) -> Vec<(String, u64)> {
    file["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|case| {
            (
                case["name"].as_str().unwrap_or_default().to_owned(),
                case["range"]["start"]["line"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect()
}

#[test]
fn the_workspace_test_files_are_listed_with_their_cases() {
    let scratch = workspace("lsp-tests-list", CONFIG);
    let text = prompt("", "return args");
    scratch.write("p.md", &text);
    scratch.write("p.test.yaml", TESTED);
    scratch.write(
        "sub/q.test.yaml",
        "prompt: ../p.md\ncases:\n  - name: live one\n    live: true\n",
    );
    scratch.write("node_modules/n.test.yaml", TESTED);
    scratch.write(".hidden/h.test.yaml", TESTED);
    let mut client = start_in(&scratch);

    let all = client
        .request("promptforge/tests", json!({}))
        .expect("the listing answers");
    let files = all["files"].as_array().cloned().unwrap_or_default();
    let uris: Vec<&str> = files.iter().filter_map(|f| f["uri"].as_str()).collect();
    assert_eq!(
        uris,
        [
            file_uri(&scratch, "p.test.yaml"),
            file_uri(&scratch, "sub/q.test.yaml")
        ],
        "{all}"
    );
    assert_eq!(files[0]["promptUri"], file_uri(&scratch, "p.md"));
    assert_eq!(
        names(&files[0]),
        [("greets".to_owned(), 1), ("fails on purpose".to_owned(), 7)]
    );
    assert_eq!(files[1]["cases"][0]["live"], true);
    assert_eq!(all.get("truncated"), None);

    // One file, from its open text (which is not yet saved).
    let tests = file_uri(&scratch, "p.test.yaml");
    let edited = TESTED.replace("greets", "says hello");
    client.open(&tests, 1, &edited);
    let one = client
        .request("promptforge/tests", json!({ "uri": tests }))
        .expect("the listing answers");
    assert_eq!(one["files"].as_array().map(Vec::len), Some(1), "{one}");
    assert_eq!(names(&one["files"][0])[0].0, "says hello");

    // A file that does not parse gives the cases it can; a missing one, none.
    let broken = "cases:\n  - name: fine\n  - name: [\n";
    client.change(&tests, 2, json!([{ "text": broken }]));
    let one = client
        .request("promptforge/tests", json!({ "uri": tests }))
        .expect("the listing answers");
    assert_eq!(one["files"].as_array().map(Vec::len), Some(1), "{one}");
    let missing = file_uri(&scratch, "absent.test.yaml");
    let none = client
        .request("promptforge/tests", json!({ "uri": missing }))
        .expect("the listing answers");
    assert_eq!(none["files"], json!([]));
}

/// The server's peak resident memory so far, in MiB (None off Linux).
fn peak_mib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// A test file larger than a listing reads (1 MiB), four times over (hard
/// links, as a workspace may hold): listed without its cases, each saying
/// `truncated`, as the answer does, at once and in the memory of an idle
/// server. It was read whole, its YAML tree some 35 times its size: one of
/// 63 MiB (617,899 cases) made the server peak at 2 GiB, four passed 6 GB.
#[test]
fn a_test_file_larger_than_a_listing_reads_is_listed_without_its_cases() {
    let scratch = workspace("lsp-tests-bounded", CONFIG);
    scratch.write("p.md", prompt("", "return args"));
    scratch.write("p.test.yaml", TESTED);
    let mut big = String::from("prompt: p.md\ncases:\n");
    let mut n = 0;
    while big.len() <= 4 << 20 {
        big.push_str(&format!(
            "  - name: case {n}\n    args: \"question {n}\"\n    expect:\n      result_contains: \"answer\"\n"
        ));
        n += 1;
    }
    let first = scratch.write("big1.test.yaml", &big);
    for i in 2..=4 {
        let link = scratch.path().join(format!("big{i}.test.yaml"));
        std::fs::hard_link(&first, link).expect("a hard link");
    }
    let mut client = start_in(&scratch);
    let idle = peak_mib(client.pid());

    let all = client
        .request("promptforge/tests", json!({}))
        .expect("the listing answers");
    let files = all["files"].as_array().cloned().unwrap_or_default();
    let cases: Vec<usize> = files.iter().map(|f| names(f).len()).collect();
    assert_eq!(all["truncated"], true, "cases listed per file: {cases:?}");
    assert_eq!(files.len(), 5, "cases listed per file: {cases:?}");
    for (i, file) in files[..4].iter().enumerate() {
        let uri = file_uri(&scratch, &format!("big{}.test.yaml", i + 1));
        assert_eq!(
            file,
            &json!({ "uri": uri, "promptUri": null, "cases": [], "truncated": true })
        );
    }
    // A file within the bounds is listed as ever.
    assert_eq!(files[4]["uri"], file_uri(&scratch, "p.test.yaml"));
    assert_eq!(names(&files[4]).len(), 2);
    assert_eq!(files[4].get("truncated"), None);

    // Asked for by itself, or open: the same.
    let uri = file_uri(&scratch, "big1.test.yaml");
    let one = client
        .request("promptforge/tests", json!({ "uri": uri }))
        .expect("the listing answers");
    assert_eq!(
        one,
        json!({ "files": [{ "uri": uri, "promptUri": null, "cases": [], "truncated": true }], "truncated": true })
    );
    // Nothing of the big files was read.
    if let (Some(idle), Some(peak)) = (idle, peak_mib(client.pid())) {
        assert!(peak <= idle + 32, "peak {peak} MiB, idle {idle} MiB");
    }
    client.open(&uri, 1, &big);
    let open = client
        .request("promptforge/tests", json!({ "uri": uri }))
        .expect("the listing answers");
    assert_eq!(open, one);
}

#[test]
fn a_failed_case_carries_its_failure_in_parts() {
    let scratch = workspace("lsp-tests-details", CONFIG);
    let text = prompt(
        "models:\n  w: {}\n",
        "local m = messages.new():user(args)\nmodels.loop(m)\nreturn m[#m].content",
    );
    scratch.write("p.md", &text);
    scratch.write("p.test.yaml", TESTED);
    let tests = file_uri(&scratch, "p.test.yaml");
    let mut client = start_in(&scratch);
    let run_id = start_run(&mut client, "promptforge.test", json!({ "uri": tests }));
    let all = events(&mut client, &run_id);
    assert_eq!(types(&all), ["caseFinished", "caseFinished", "finished"]);
    assert!(all[0]["durationMs"].is_u64(), "{}", all[0]);
    assert_eq!(all[0]["details"], json!([]));
    assert!(all[1]["durationMs"].is_u64(), "{}", all[1]);
    let detail = &all[1]["details"][0];
    assert_eq!(detail["what"], "expect.result");
    assert_eq!(detail["message"], "the result differs");
    assert_eq!(detail["expected"], "something else");
    assert_eq!(detail["actual"], "nope");
    assert_eq!(detail["exact"], true);
    // `result: "something else"` is line 11 (0-based) of the test file.
    assert_eq!(detail["range"]["start"]["line"], 11, "{detail}");
    assert_eq!(all[1]["details"].as_array().map(Vec::len), Some(1));
}
