//! `promptforge catalog [FILE]` (`host.md` §4): the Host's Plugins and their tools,
//! or, for a prompt, its run's catalog (the declared Plugins' tools, in catalog
//! order) and its tool slots.
//!
//! Listing a Plugin's tools means activating it for a throwaway run (an in-memory
//! filesystem, a cancel signal fired when the listing is done), so an MCP server
//! starts and stops here.

use std::io::{self, Write};
use std::sync::Arc;

use promptforge_analysis::tool_parameters::parameter_lines;
use promptforge_engine::harness::{Activation, OutputKind, Tool, Trust};
use promptforge_engine::{prepare, Host, Prepared, Store};
use promptforge_luacheck::parse;
use promptforge_syntax::is_prompt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::cli::{CatalogArgs, CatalogFormat, GlobalArgs};
use crate::exit::Exit;
use crate::host_setup;
use crate::problem::Problem;

/// One Plugin of the Host and what activating it gave.
struct PluginListing {
    id: String,
    tools: Result<Vec<Arc<dyn Tool>>, String>,
    /// What the Plugin logged while activating (tools an MCP server lists that it skipped).
    log: Vec<String>,
}

/// Runs `promptforge catalog`; returns the exit status.
pub fn run(args: &CatalogArgs, global: &GlobalArgs) -> Exit {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("promptforge: cannot start the runtime: {e}");
            return Exit::Usage;
        }
    };
    let dir = args
        .file
        .as_deref()
        .map(host_setup::prompt_dir)
        .or_else(|| Some(".".into()));
    let host = match host_setup::load_config(global, dir).and_then(host_setup::host_of) {
        Ok(host) => Arc::new(host),
        Err(error) => {
            eprintln!("promptforge: {error}");
            return Exit::Usage;
        }
    };
    let cancel = CancellationToken::new();
    let status = match &args.file {
        None => {
            let listings = runtime.block_on(list_plugins(&host, cancel.clone()));
            print(args.format, host_text(&listings), host_json(&listings))
        }
        Some(file) => {
            let display = file.display().to_string();
            let text = match crate::files::read_text(file) {
                Ok(text) => text,
                Err(reason) => {
                    eprintln!("promptforge: {display}: {reason}");
                    return Exit::Usage;
                }
            };
            if !is_prompt(&text) {
                for problem in Problem::not_a_prompt(&display, &text) {
                    println!("{}", crate::output::text_line(&problem));
                }
                return Exit::Problems;
            }
            let analysis = parse(&text);
            let store = Arc::new(Store::in_memory());
            match runtime.block_on(prepare(&text, &analysis, &host, store, cancel.clone())) {
                Ok(prepared) => print(
                    args.format,
                    prompt_text(&prepared),
                    prompt_json(&display, &prepared),
                ),
                Err(error) => {
                    let problem =
                        Problem::from_prepare(&display, &text, &analysis.line_index, &error);
                    println!("{}", crate::output::text_line(&problem));
                    Exit::Problems
                }
            }
        }
    };
    cancel.cancel();
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    status
}

/// Activates every Plugin the Host registers, in registration order.
async fn list_plugins(host: &Host, cancel: CancellationToken) -> Vec<PluginListing> {
    let mut listings = Vec::new();
    for id in host.harness().ids() {
        let Some(plugin) = host.harness().get(&id) else {
            continue;
        };
        let activation = Activation::new(
            Arc::new(Store::in_memory()),
            cancel.clone(),
            host.services(),
        );
        let log = activation.log.clone();
        let tools = plugin.activate(activation).await.map_err(|e| e.reason);
        let tools = tools.map(|tools| tools.into_iter().filter(|t| t.id().is_under(&id)).collect());
        listings.push(PluginListing {
            id,
            tools,
            log: log.take(),
        });
    }
    listings
}

fn print(format: CatalogFormat, text: String, object: Value) -> Exit {
    let mut out = io::stdout().lock();
    let written = match format {
        CatalogFormat::Text => out.write_all(text.as_bytes()),
        CatalogFormat::Json => serde_json::to_writer_pretty(&mut out, &object)
            .map_err(io::Error::other)
            .and_then(|()| writeln!(out)),
    };
    if crate::output::failed_to_write(written.and_then(|()| out.flush())) {
        Exit::Usage
    } else {
        Exit::Ok
    }
}

fn trust_text(tool: &dyn Tool) -> &'static str {
    match tool.trust() {
        Trust::Trusted => "trusted",
        Trust::Untrusted => "untrusted",
    }
}

fn kind_text(tool: &dyn Tool) -> &'static str {
    match tool.output_kind() {
        OutputKind::Plain => "plain",
        OutputKind::Structured => "structured",
    }
}

/// A tool's block in the text listing.
fn tool_text(out: &mut String, tool: &dyn Tool) {
    out.push_str(&format!(
        "  {} ({}, {})\n",
        tool.id(),
        trust_text(tool),
        kind_text(tool)
    ));
    for line in tool.description().lines() {
        out.push_str(&format!("    {line}\n"));
    }
    let parameters = parameter_lines(tool.parameters());
    if parameters.is_empty() {
        out.push_str("    parameters: none\n");
    } else {
        out.push_str("    parameters:\n");
        for line in parameters {
            out.push_str(&format!("      {line}\n"));
        }
    }
}

fn tool_json(tool: &dyn Tool) -> Value {
    json!({
        "path": tool.id().as_str(),
        "wire_name": tool.wire_name(),
        "description": tool.description(),
        "parameters": tool.parameters(),
        "trust": trust_text(tool),
        "kind": kind_text(tool),
    })
}

fn host_text(listings: &[PluginListing]) -> String {
    if listings.is_empty() {
        return "the Host registers no Plugins\n".to_owned();
    }
    let mut out = String::new();
    for listing in listings {
        out.push_str(&listing.id);
        out.push('\n');
        match &listing.tools {
            Ok(tools) if tools.is_empty() => out.push_str("  (no tools)\n"),
            Ok(tools) => tools.iter().for_each(|t| tool_text(&mut out, t.as_ref())),
            Err(reason) => out.push_str(&format!("  failed to activate: {reason}\n")),
        }
        for line in &listing.log {
            out.push_str(&format!("  log: {line}\n"));
        }
    }
    out
}

fn host_json(listings: &[PluginListing]) -> Value {
    let plugins: Vec<Value> = listings
        .iter()
        .map(|listing| match &listing.tools {
            Ok(tools) => json!({
                "id": listing.id,
                "tools": tools.iter().map(|t| tool_json(t.as_ref())).collect::<Vec<_>>(),
                "log": listing.log,
            }),
            Err(reason) => {
                json!({ "id": listing.id, "error": reason, "tools": [], "log": listing.log })
            }
        })
        .collect();
    json!({ "plugins": plugins })
}

fn prompt_text(prepared: &Prepared) -> String {
    let mut out = String::from("catalog:\n");
    if prepared.catalog.entries().is_empty() {
        out.push_str("  (no tools)\n");
    }
    for entry in prepared.catalog.entries() {
        tool_text(&mut out, entry.tool.as_ref());
    }
    out.push_str("slots:\n");
    if prepared.slots.is_empty() {
        out.push_str("  (no tool slots)\n");
    }
    for slot in &prepared.slots {
        let state = if slot.tool.is_some() {
            "bound"
        } else {
            "unbound: the catalog has no tool at this path"
        };
        out.push_str(&format!("  {} -> {} ({state})\n", slot.alias, slot.path));
    }
    for line in &prepared.log {
        out.push_str(&format!("log: {line}\n"));
    }
    out
}

fn prompt_json(path: &str, prepared: &Prepared) -> Value {
    let catalog: Vec<Value> = prepared
        .catalog
        .entries()
        .iter()
        .map(|entry| {
            let mut tool = tool_json(entry.tool.as_ref());
            if let Some(object) = tool.as_object_mut() {
                object.insert("plugin".into(), json!(entry.plugin));
            }
            tool
        })
        .collect();
    let slots: Vec<Value> = prepared
        .slots
        .iter()
        .map(|slot| json!({ "alias": slot.alias, "path": slot.path, "bound": slot.tool.is_some() }))
        .collect();
    json!({ "prompt": path, "catalog": catalog, "slots": slots, "log": prepared.log })
}
