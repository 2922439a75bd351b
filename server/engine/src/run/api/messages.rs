//! `messages.new()`: conversation lists with `:system`, `:user`, `:assistant`,
//! `#msgs` and read-only records `msgs[i]`.

use std::sync::{Arc, Mutex};

use mlua::{AnyUserData, Lua, MetaMethod, UserData, UserDataMethods, Value};

use crate::messages;
use crate::models::{ChatMessage, Role};
use crate::run::json::type_name;
use crate::run::vm::{charge_host_bytes, usage_error};

/// A conversation list; Lua holds it as userdata, models append to it.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// The records, shared with the model loop.
    pub records: Arc<Mutex<Vec<ChatMessage>>>,
}

impl Conversation {
    /// A copy of the records.
    pub fn snapshot(&self) -> Vec<ChatMessage> {
        self.records.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// The message for assigning into a list (the spec leaves the text open).
fn list_read_only() -> String {
    "message lists change only through :system, :user and :assistant".to_owned()
}

fn append(
    lua: &Lua,
    list: AnyUserData,
    role: Role,
    method: &str,
    text: Value,
) -> mlua::Result<AnyUserData> {
    let text = match &text {
        Value::String(s) => s.to_string_lossy(),
        other => {
            return Err(usage_error(messages::message_text_not_string(
                method,
                type_name(other),
            )))
        }
    };
    // The records live in host memory, outside the VM's allocator: they count
    // against its ceiling here.
    charge_host_bytes(lua, text.len())?;
    {
        let records = list.borrow::<Conversation>()?.records.clone();
        let mut guard = records.lock().unwrap_or_else(|p| p.into_inner());
        guard.push(ChatMessage::text(role, text));
    }
    Ok(list)
}

impl UserData for Conversation {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_function("system", |lua, (list, text): (AnyUserData, Value)| {
            append(lua, list, Role::System, "system", text)
        });
        methods.add_function("user", |lua, (list, text): (AnyUserData, Value)| {
            append(lua, list, Role::User, "user", text)
        });
        methods.add_function("assistant", |lua, (list, text): (AnyUserData, Value)| {
            append(lua, list, Role::Assistant, "assistant", text)
        });
        methods.add_meta_method(MetaMethod::Len, |_, this, ()| Ok(this.snapshot().len()));
        methods.add_meta_method(MetaMethod::Index, |_, this, key: Value| {
            let index = match key {
                Value::Integer(i) => i,
                Value::Number(n) if n.fract() == 0.0 => n as i64,
                _ => return Ok(None),
            };
            let records = this.snapshot();
            let record = usize::try_from(index - 1)
                .ok()
                .and_then(|i| records.get(i))
                .cloned();
            Ok(record.map(Record))
        });
        methods.add_meta_method(MetaMethod::NewIndex, |_, _, (_, _): (Value, Value)| {
            Err::<(), _>(usage_error(list_read_only()))
        });
    }
}

/// One read-only record `{ role, content, tool_calls, tool_call_id, name }`.
#[derive(Debug, Clone)]
pub struct Record(pub ChatMessage);

impl UserData for Record {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::Index, |lua, this, key: String| {
            let record = &this.0;
            Ok(match key.as_str() {
                "role" => Value::String(lua.create_string(record.role.as_str())?),
                "content" => Value::String(lua.create_string(&record.content)?),
                "tool_call_id" => match &record.tool_call_id {
                    Some(id) => Value::String(lua.create_string(id)?),
                    None => Value::Nil,
                },
                "name" => match &record.name {
                    Some(name) => Value::String(lua.create_string(name)?),
                    None => Value::Nil,
                },
                "tool_calls" if record.tool_calls.is_empty() => Value::Nil,
                "tool_calls" => {
                    let calls = lua.create_table()?;
                    for (i, call) in record.tool_calls.iter().enumerate() {
                        let entry = lua.create_table()?;
                        entry.set("id", call.id.as_str())?;
                        entry.set("name", call.name.as_str())?;
                        entry.set("arguments", call.arguments.as_str())?;
                        calls.raw_set(i + 1, entry)?;
                    }
                    Value::Table(calls)
                }
                _ => Value::Nil,
            })
        });
        methods.add_meta_method(MetaMethod::NewIndex, |_, _, (key, _): (String, Value)| {
            Err::<(), _>(usage_error(messages::record_read_only(&key)))
        });
    }
}

/// Installs `messages`.
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let table = lua.create_table()?;
    table.set(
        "new",
        lua.create_function(|_, ()| Ok(Conversation::default()))?,
    )?;
    lua.globals().set("messages", table)
}
