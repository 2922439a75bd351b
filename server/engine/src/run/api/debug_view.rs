//! The Run scope a paused section shows in the debugger (the debugger issue):
//! `args`, `var`, `sys`, `tools.calls`, the section's scope (the aliases a
//! model round offers, in scope order, with their descriptions), the
//! conversation of the `models.loop` in progress, and the store; and how the
//! engine's own values held as userdata are shown.

use std::sync::{Arc, Weak};

use mlua::{AnyUserData, Lua};
use serde_json::{json, Value as Json};

use crate::models::{ChatMessage, Role};
use crate::run::api::messages::Conversation;
use crate::run::api::models::ModelHandle;
use crate::run::chain_var;
use crate::run::context::SectionCtx;
use crate::run::conversation::section_label;
use crate::run::debugger::{RunValue, SectionView, Shown};
use crate::run::tools::object::ToolObject;
use crate::run::tools::scope;

/// Gives the section's VM its Run scope, when a debugger is attached.
pub fn attach(ctx: &Arc<SectionCtx>) {
    if let Some(debug) = &ctx.control.debug {
        let view: Weak<dyn SectionView> = Arc::downgrade(ctx) as Weak<dyn SectionView>;
        debug.attach_view(view);
    }
}

fn text(value: impl Into<String>) -> RunValue {
    RunValue::Json(Json::String(value.into()))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// One record as `msgs[i]` reads it.
fn record(message: &ChatMessage) -> RunValue {
    let mut fields = vec![
        ("role".to_owned(), text(role_name(message.role))),
        ("content".to_owned(), text(message.content.clone())),
    ];
    if !message.tool_calls.is_empty() {
        let calls = message
            .tool_calls
            .iter()
            .map(|call| json!({ "id": call.id, "name": call.name, "arguments": call.arguments }))
            .collect();
        fields.push(("tool_calls".to_owned(), RunValue::Json(Json::Array(calls))));
    }
    if let Some(id) = &message.tool_call_id {
        fields.push(("tool_call_id".to_owned(), text(id.clone())));
    }
    if let Some(name) = &message.name {
        fields.push(("name".to_owned(), text(name.clone())));
    }
    let summary = match message.content.chars().count() {
        0 if !message.tool_calls.is_empty() => {
            let names: Vec<&str> = message.tool_calls.iter().map(|c| c.name.as_str()).collect();
            format!("{}: calls {}", role_name(message.role), names.join(", "))
        }
        n if n > 60 => format!(
            "{}: {}…",
            role_name(message.role),
            message.content.chars().take(60).collect::<String>()
        ),
        _ => format!("{}: {}", role_name(message.role), message.content),
    };
    RunValue::Entries(summary, fields)
}

/// Records as numbered entries.
fn records(messages: &[ChatMessage]) -> RunValue {
    let entries = messages
        .iter()
        .enumerate()
        .map(|(i, m)| (format!("[{}]", i + 1), record(m)))
        .collect();
    RunValue::Entries(format!("{} records", messages.len()), entries)
}

impl SectionView for SectionCtx {
    fn run_scope(&self, lua: &Lua) -> Vec<(String, RunValue)> {
        let mut entries = vec![("args".to_owned(), text(self.chain.args.clone()))];
        if let Some(data) = chain_var::data(lua) {
            entries.push(("var".to_owned(), RunValue::Lua(mlua::Value::Table(data))));
        }
        let run = &self.run;
        let mut sys = vec![
            ("prompt".to_owned(), text(run.prepared.name.clone())),
            ("section".to_owned(), text(self.heading.clone())),
            ("run".to_owned(), text(run.identity.run_id.clone())),
            (
                "seed".to_owned(),
                RunValue::Json(run.seed.map_or(Json::Null, Json::from)),
            ),
        ];
        if let Some((index, _)) = &self.chain.arm {
            sys.push(("index".to_owned(), RunValue::Json(Json::from(*index))));
        }
        if self.with_state(|s| s.first_call) {
            if let Ok(label) = section_label(self) {
                sys.push(("model".to_owned(), text(label)));
            }
        }
        let summary = format!(
            "{{prompt = {:?}, section = {:?}, …}}",
            run.prepared.name, self.heading
        );
        entries.push(("sys".to_owned(), RunValue::Entries(summary, sys)));
        let counts = self.with_state(|s| s.tools.counts.clone());
        // Before the section's first call, `tools.calls` is nil in Lua too.
        let calls = counts.map_or(RunValue::Lua(mlua::Value::Nil), |counts| {
            let counts = counts.into_iter().map(|(k, v)| (k, Json::from(v)));
            RunValue::Json(Json::Object(counts.collect()))
        });
        entries.push(("tools.calls".to_owned(), calls));
        let offered = scope::offered(self).unwrap_or_default();
        let shown: Vec<&str> = offered.iter().map(|s| s.name.as_str()).collect();
        let scope_entries = offered
            .iter()
            .map(|spec| (spec.name.clone(), text(spec.description.clone())))
            .collect();
        entries.push((
            "scope".to_owned(),
            RunValue::Entries(format!("[{}]", shown.join(", ")), scope_entries),
        ));
        if let Some(conversation) = self.with_state(|s| s.conversation.clone()) {
            let mut all = conversation
                .records
                .lock()
                .map(|r| r.clone())
                .unwrap_or_default();
            all.extend(conversation.pending);
            entries.push(("conversation".to_owned(), records(&all)));
        }
        entries.push(("store".to_owned(), RunValue::Store(run.store.clone())));
        entries
    }

    fn userdata(&self, _lua: &Lua, value: &AnyUserData) -> Option<Shown> {
        if let Ok(list) = value.borrow::<Conversation>() {
            let all = list.snapshot();
            return Some(Shown {
                text: format!("messages ({} records)", all.len()),
                type_name: "messages".to_owned(),
                children: Some(records(&all)),
            });
        }
        if let Ok(tool) = value.borrow::<ToolObject>() {
            let fields = vec![
                ("name".to_owned(), text(tool.alias.clone())),
                ("description".to_owned(), text(tool.description.clone())),
                ("wire_name".to_owned(), text(tool.wire_name.clone())),
            ];
            return Some(Shown {
                text: format!("tool {}", tool.alias),
                type_name: "tool".to_owned(),
                children: Some(RunValue::Entries(tool.alias.clone(), fields)),
            });
        }
        if let Ok(handle) = value.borrow::<ModelHandle>() {
            let fields = vec![
                ("name".to_owned(), text(handle.label.clone())),
                ("model".to_owned(), text(handle.model.clone())),
            ];
            return Some(Shown {
                text: format!("model {} ({})", handle.label, handle.model),
                type_name: "model".to_owned(),
                children: Some(RunValue::Entries(handle.label.clone(), fields)),
            });
        }
        None
    }
}
