//! What a paused chain answers (the debugger issue): its stack, the scopes of a
//! frame (Locals, Upvalues, Run), variables that expand on demand, evaluation
//! and setting a variable. It runs on the paused chain's own thread, where its
//! VM lives; handles name the values it handed out and live while the pause does.

use std::sync::Arc;

use mlua::{Lua, Table, Value};

use super::control::{VmControl, VmDebug};
use super::errors::error_message;
use super::eval::{self, evaluate};
use super::frames::{self, SlotKind};
use super::shown::{entries, json_text, key_name, quoted, show};
use crate::run::debugger::{Answer, Frame, Query, RunValue, ScopeInfo, SectionView, Variable};
use crate::run::json;
use crate::store::Store;

/// The most children a variable lists.
const MAX_CHILDREN: usize = 1000;

/// A value a handle names.
#[derive(Clone)]
enum Node {
    Locals(usize),
    Upvalues(usize),
    Run,
    /// A Lua value; `under_var` when it is `var`'s data or inside it.
    Lua {
        value: Value,
        under_var: bool,
    },
    /// Entries the host gave.
    Value(RunValue),
    /// The lines of a store file, read when they are asked for.
    Lines(Arc<Store>, String),
}

/// A paused chain's answers.
pub struct Inspector<'a> {
    lua: &'a Lua,
    control: &'a VmControl,
    vm: &'a VmDebug,
    view: Option<Arc<dyn SectionView>>,
    frames: Vec<Frame>,
    /// How many of the frames belong to this VM (the rest are its callers').
    own: usize,
    nodes: Vec<Node>,
}

impl<'a> Inspector<'a> {
    /// The inspector of a chain paused with `frames` (the first `own` of them
    /// this VM's), in the VM `lua` (its `control` and debugger side `vm`).
    pub fn new(
        lua: &'a Lua,
        (control, vm): (&'a VmControl, &'a VmDebug),
        frames: Vec<Frame>,
        own: usize,
    ) -> Self {
        Inspector {
            lua,
            control,
            vm,
            view: vm.view(),
            frames,
            own,
            nodes: Vec::new(),
        }
    }

    fn handle(&mut self, node: Node) -> u32 {
        self.nodes.push(node);
        u32::try_from(self.nodes.len()).unwrap_or(0)
    }

    /// Answers one question.
    pub fn answer(&mut self, query: Query) -> Answer {
        match query {
            Query::Frames => Answer::Frames(self.frames.clone()),
            Query::Scopes { frame } => Answer::Scopes(self.scopes(frame)),
            Query::Variables { handle } => match self.children(handle) {
                Some(variables) => Answer::Variables(variables),
                None => Answer::Failed(format!("no variables with handle {handle}")),
            },
            Query::Evaluate {
                frame,
                expression,
                whole,
            } => {
                let level = self.level_of(frame);
                match evaluate(self.lua, (self.control, self.vm), level, &expression) {
                    Ok(value) => Answer::Value(self.variable(expression, value, whole, false)),
                    Err(message) => Answer::Failed(message),
                }
            }
            Query::SetVariable {
                handle,
                name,
                value,
            } => match self.set(handle, &name, &value) {
                Ok(variable) => Answer::Value(variable),
                Err(message) => Answer::Failed(message),
            },
        }
    }

    /// The Lua level of a frame (the innermost frame of this VM when None).
    fn level_of(&self, frame: Option<usize>) -> Option<usize> {
        match frame {
            Some(index) => self.frames.get(index).and_then(|f| f.level),
            None => self.frames.iter().find_map(|f| f.level),
        }
    }

    fn scopes(&mut self, frame: usize) -> Vec<ScopeInfo> {
        if frame >= self.own {
            return Vec::new();
        }
        let mut scopes = Vec::new();
        if let Some(level) = self.frames.get(frame).and_then(|f| f.level) {
            let locals = self.handle(Node::Locals(level));
            scopes.push(ScopeInfo {
                name: "Locals".to_owned(),
                handle: locals,
            });
            let upvalues = self.handle(Node::Upvalues(level));
            scopes.push(ScopeInfo {
                name: "Upvalues".to_owned(),
                handle: upvalues,
            });
        }
        let run = self.handle(Node::Run);
        scopes.push(ScopeInfo {
            name: "Run".to_owned(),
            handle: run,
        });
        scopes
    }

    /// A variable for a Lua value (its children under a new handle).
    fn variable(&mut self, name: String, value: Value, whole: bool, under_var: bool) -> Variable {
        let (text, type_name, children) = show(self.lua, self.view.as_deref(), &value, whole);
        let handle = match children {
            Some(RunValue::Lua(value)) => self.handle(Node::Lua { value, under_var }),
            Some(other) => self.handle(Node::Value(other)),
            None => 0,
        };
        Variable {
            name,
            value: text,
            type_name,
            handle,
        }
    }

    /// A variable for a value the host gave.
    fn run_variable(&mut self, name: String, value: RunValue) -> Variable {
        match value {
            RunValue::Lua(value) => {
                let under_var = name == "var";
                self.variable(name, value, false, under_var)
            }
            RunValue::Json(data) => {
                let (text, type_name, expands) = json_text(&data);
                let handle = if expands {
                    self.handle(Node::Value(RunValue::Json(data)))
                } else {
                    0
                };
                Variable {
                    name,
                    value: text,
                    type_name,
                    handle,
                }
            }
            RunValue::Entries(summary, entries) => {
                let handle = self.handle(Node::Value(RunValue::Entries(summary.clone(), entries)));
                Variable {
                    name,
                    value: summary,
                    type_name: "object".to_owned(),
                    handle,
                }
            }
            RunValue::Store(store) => {
                let count = store.list(None).map(|p| p.len()).unwrap_or(0);
                let handle = self.handle(Node::Value(RunValue::Store(store)));
                Variable {
                    name,
                    value: format!("{count} files"),
                    type_name: "store".to_owned(),
                    handle,
                }
            }
        }
    }

    fn slots(&mut self, found: Vec<frames::Slot>) -> Vec<Variable> {
        // A later slot of the same name shadows an earlier one: show the visible one.
        let mut visible: Vec<frames::Slot> = Vec::new();
        for slot in found {
            visible.retain(|s| s.name != slot.name);
            visible.push(slot);
        }
        visible
            .into_iter()
            .map(|slot| self.variable(slot.name, slot.value, false, false))
            .collect()
    }

    fn children(&mut self, handle: u32) -> Option<Vec<Variable>> {
        let index = usize::try_from(handle).ok()?.checked_sub(1)?;
        let node = self.nodes.get(index)?.clone();
        Some(match node {
            Node::Locals(level) => {
                let found = frames::locals(self.lua, level);
                self.slots(found)
            }
            Node::Upvalues(level) => {
                let found = frames::upvalues(self.lua, level);
                self.slots(found)
            }
            Node::Run => {
                let entries = self
                    .view
                    .as_ref()
                    .map(|view| view.run_scope(self.lua))
                    .unwrap_or_default();
                entries
                    .into_iter()
                    .map(|(name, value)| self.run_variable(name, value))
                    .collect()
            }
            Node::Lua {
                value: Value::Table(table),
                under_var,
            } => {
                let (all, total) = entries(&table, MAX_CHILDREN);
                let mut shown: Vec<Variable> = all
                    .into_iter()
                    .map(|(key, value)| self.variable(key_name(&key), value, false, under_var))
                    .collect();
                shown.extend(more(total));
                shown
            }
            // A Lua value is always held as `Node::Lua` (see `variable`).
            Node::Lua { .. } | Node::Value(RunValue::Lua(_)) => Vec::new(),
            Node::Value(RunValue::Json(data)) => self.json_children(data),
            Node::Value(RunValue::Entries(_, entries)) => entries
                .into_iter()
                .map(|(name, value)| self.run_variable(name, value))
                .collect(),
            Node::Value(RunValue::Store(store)) => self.store_children(&store),
            Node::Lines(store, path) => {
                let text = store.read(&path, None, None).unwrap_or_default();
                let total = text.lines().count();
                let mut shown: Vec<Variable> = text
                    .lines()
                    .take(MAX_CHILDREN)
                    .enumerate()
                    .map(|(n, line)| Variable {
                        name: format!("[{}]", n + 1),
                        value: quoted(line, false),
                        type_name: "string".to_owned(),
                        handle: 0,
                    })
                    .collect();
                shown.extend(more(total));
                shown
            }
        })
    }

    fn json_children(&mut self, data: serde_json::Value) -> Vec<Variable> {
        let pairs: Vec<(String, serde_json::Value)> = match data {
            serde_json::Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("[{}]", i + 1), v))
                .collect(),
            serde_json::Value::Object(fields) => fields.into_iter().collect(),
            _ => Vec::new(),
        };
        let total = pairs.len();
        let mut shown: Vec<Variable> = pairs
            .into_iter()
            .take(MAX_CHILDREN)
            .map(|(name, value)| self.run_variable(name, RunValue::Json(value)))
            .collect();
        shown.extend(more(total));
        shown
    }

    fn store_children(&mut self, store: &Arc<Store>) -> Vec<Variable> {
        let paths = store.list(None).unwrap_or_default();
        let total = paths.len();
        let mut shown: Vec<Variable> = paths
            .into_iter()
            .take(MAX_CHILDREN)
            .map(|path| {
                let text = store.read(&path, None, None).unwrap_or_default();
                let value = quoted(&text, false);
                drop(text);
                let handle = self.handle(Node::Lines(store.clone(), path.clone()));
                Variable {
                    name: path,
                    value,
                    type_name: "file".to_owned(),
                    handle,
                }
            })
            .collect();
        shown.extend(more(total));
        shown
    }

    /// `setVariable`: a local, an upvalue, or a field under `var`, set to the
    /// value of `code` evaluated in the innermost frame.
    fn set(&mut self, handle: u32, name: &str, code: &str) -> Result<Variable, String> {
        let index = usize::try_from(handle)
            .ok()
            .and_then(|h| h.checked_sub(1))
            .ok_or("no such variable")?;
        let target = match self.nodes.get(index) {
            Some(Node::Locals(level)) => Target::Slot(SlotKind::Local, *level),
            Some(Node::Upvalues(level)) => Target::Slot(SlotKind::Upvalue, *level),
            Some(Node::Lua {
                value: Value::Table(table),
                under_var: true,
            }) => Target::VarField(table.clone()),
            _ => return Err("only locals, upvalues and fields under var can be set".to_owned()),
        };
        let level = match target {
            Target::Slot(_, level) => Some(level),
            Target::VarField(_) => self.level_of(None),
        };
        let value = evaluate(self.lua, (self.control, self.vm), level, code)?;
        match target {
            Target::Slot(kind, level) => {
                let slots = match kind {
                    SlotKind::Local => frames::locals(self.lua, level),
                    SlotKind::Upvalue => frames::upvalues(self.lua, level),
                };
                let slot = slots
                    .into_iter()
                    .rev()
                    .find(|s| s.name == name)
                    .ok_or_else(|| format!("no variable named {name} here"))?;
                if !frames::set_slot(self.lua, level, kind, slot.index, value.clone()) {
                    return Err(format!("{name} cannot be set"));
                }
            }
            Target::VarField(table) => {
                json::to_json(&value).map_err(crate::messages::var_cannot_hold)?;
                let key = match name
                    .strip_prefix('[')
                    .and_then(|n| n.strip_suffix(']'))
                    .and_then(|n| n.parse::<i64>().ok())
                {
                    Some(index) => Value::Integer(index),
                    None => Value::String(
                        self.lua
                            .create_string(name)
                            .map_err(|e| error_message(&e))?,
                    ),
                };
                table
                    .raw_set(key, value.clone())
                    .map_err(|e| error_message(&e))?;
            }
        }
        Ok(self.variable(name.to_owned(), value, false, false))
    }
}

/// Where `setVariable` writes.
enum Target {
    Slot(SlotKind, usize),
    VarField(Table),
}

/// The entry that says how many children were left out.
fn more(total: usize) -> Option<Variable> {
    (total > MAX_CHILDREN).then(|| Variable {
        name: "…".to_owned(),
        value: format!("{} more", total - MAX_CHILDREN),
        type_name: String::new(),
        handle: 0,
    })
}

/// The text a logpoint shows for a value: a string as it is, anything else as
/// the Variables view writes it.
pub fn logged(lua: &Lua, view: Option<&dyn SectionView>, value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string_lossy(),
        other => show(lua, view, other, false).0,
    }
}

/// A logpoint's message, each `{expression}` evaluated in the frame at `level`.
pub fn log_message(
    lua: &Lua,
    (control, vm): (&VmControl, &VmDebug),
    level: Option<usize>,
    message: &str,
) -> String {
    let view = vm.view();
    eval::interpolate(message, |expression| {
        match evaluate(lua, (control, vm), level, expression) {
            Ok(value) => logged(lua, view.as_deref(), &value),
            Err(error) => format!("<error: {error}>"),
        }
    })
}
