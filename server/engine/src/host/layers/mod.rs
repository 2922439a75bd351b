//! Configuration layers (`host.md` §1, §1.1): each file read on its own, with the
//! line of every key, then the project's tables laid over the user's key by key.
//! The keys of a project configuration that is not trusted and that would act on
//! the world are found here, on the merged result, and can be withheld.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::config::{
    read_text, Config, ConfigError, Limits, ModelConfig, PluginConfig, ProviderKind, TraceConfig,
    WebConfig,
};
use super::trust::{Act, Part, TrustNeed};

/// The namespace of the Host's own Plugins, which no configuration may define.
pub const HOST_NAMESPACE: &str = "promptforge/";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    provider: Option<Spanned<ProviderKind>>,
    base_url: Option<Spanned<String>>,
    model: Option<String>,
    api_key_env: Option<Spanned<String>>,
    timeout_s: Option<u64>,
    retries: Option<u32>,
    path: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginFile {
    command: Option<Spanned<String>>,
    args: Option<Spanned<Vec<String>>>,
    env: Option<Spanned<BTreeMap<String, String>>>,
    conflicts: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebFile {
    search_endpoint: Option<Spanned<String>>,
    search_key_env: Option<Spanned<String>>,
    allow_private_addresses: Option<Spanned<bool>>,
    max_fetch_bytes: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceFile {
    otlp_endpoint: Option<Spanned<String>>,
}

/// The `[limits]` keys, in the order of `host.md`.
pub(super) const LIMIT_KEYS: [&str; 10] = [
    "lua_memory_mib",
    "lua_instructions",
    "call_depth",
    "fanout_concurrency",
    "tool_output_bytes",
    "log_bytes",
    "store_bytes",
    "store_files",
    "trace_bytes",
    "walk_sections",
];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    default_model: Option<String>,
    #[serde(default)]
    model: BTreeMap<String, ModelFile>,
    #[serde(default)]
    plugin: BTreeMap<String, PluginFile>,
    web: Option<WebFile>,
    #[serde(default)]
    limits: BTreeMap<String, Spanned<u64>>,
    trace: Option<TraceFile>,
    test: Option<test_table::TestFile>,
}

impl Config {
    /// Reads and checks the configuration file at `path`, trusted (a file named
    /// explicitly, the user's own).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = read_text(path)?;
        Config::parse(&text, path)
    }

    /// Parses configuration `text` read from `path`, trusted.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let layer = Layer::parse(text, path, true)?;
        Ok(merge(None, &layer)?.config)
    }
}

/// One configuration file, read and checked on its own.
#[derive(Debug, Clone)]
pub struct Layer {
    path: PathBuf,
    text: String,
    trusted: bool,
    file: File,
}

/// The merged configuration, and the acting keys of a project layer that is not
/// trusted (empty when it is trusted).
#[derive(Debug, Clone)]
pub struct Merged {
    /// Every key of every layer.
    pub config: Config,
    /// What needs trust.
    pub untrusted: Vec<TrustNeed>,
}

impl Layer {
    /// Parses `text` read from `path`: unknown keys, bad values, a limit of 0 and a
    /// Plugin in the Host's namespace are errors at their line.
    pub fn parse(text: &str, path: &Path, trusted: bool) -> Result<Layer, ConfigError> {
        let error_at = |span: Option<Range<usize>>, message: String| ConfigError {
            path: path.to_path_buf(),
            line: span.map(|s| line_of(text, s.start)),
            message,
        };
        let file: File = toml::from_str(text)
            .map_err(|e| error_at(e.span(), e.message().trim_end().to_owned()))?;
        for (key, value) in &file.limits {
            if !LIMIT_KEYS.contains(&key.as_str()) {
                let span = Some(value.span());
                let expected = LIMIT_KEYS.map(|k| format!("`{k}`")).join(", ");
                return Err(error_at(
                    span,
                    format!("unknown field `{key}`, expected one of {expected}"),
                ));
            }
            if *value.get_ref() == 0 {
                return Err(error_at(
                    Some(value.span()),
                    format!("limits.{key} must be at least 1"),
                ));
            }
        }
        if let Some(id) = file.plugin.keys().find(|id| id.starts_with(HOST_NAMESPACE)) {
            return Err(error_at(
                key_span(text, &format!("\"{id}\"")),
                format!(
                    "plugin.\"{id}\": the promptforge/ namespace belongs to the Host's own Plugins; a configuration cannot define or replace one"
                ),
            ));
        }
        Ok(Layer {
            path: path.to_path_buf(),
            text: text.to_owned(),
            trusted,
            file,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder relative paths resolve against.
    fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::new(),
        }
    }

    fn line(&self, offset: usize) -> Option<u32> {
        Some(line_of(&self.text, offset))
    }

    fn table_line(&self, header: &str) -> Option<u32> {
        key_span(&self.text, header).map(|s| line_of(&self.text, s.start))
    }

    fn error(&self, line: Option<u32>, message: String) -> ConfigError {
        ConfigError {
            path: self.path.clone(),
            line,
            message,
        }
    }
}

/// Lays `top` over `base` (the user's configuration, trusted), key by key, and
/// finds what in `top` needs trust when it is not trusted.
pub fn merge(base: Option<&Layer>, top: &Layer) -> Result<Merged, ConfigError> {
    let layers: Vec<&Layer> = base.into_iter().chain([top]).collect();
    let config = Config {
        path: Some(top.path.clone()),
        default_model: layers
            .iter()
            .rev()
            .find_map(|l| l.file.default_model.clone()),
        models: models(&layers)?,
        plugins: plugins(&layers)?,
        web: web(&layers),
        limits: limits(&layers),
        trace: TraceConfig {
            otlp_endpoint: layers.iter().rev().find_map(|l| {
                let trace = l.file.trace.as_ref()?;
                Some(trace.otlp_endpoint.as_ref()?.get_ref().clone())
            }),
        },
        test: test_table::merged(&layers),
        withheld: Vec::new(),
    };
    let untrusted = if top.trusted {
        Vec::new()
    } else {
        needs(base, top, &config)
    };
    Ok(Merged { config, untrusted })
}

/// `merged` with the parts that need trust taken out: the project's Plugins that
/// would start, its raised limits, its web keys, its trace endpoint; models that would
/// hand a key, send requests off this machine or read outside the folder stay named
/// but are listed in `withheld`.
pub fn withhold(base: Option<&Layer>, top: &Layer, merged: Merged) -> Result<Config, ConfigError> {
    if merged.untrusted.is_empty() {
        return Ok(merged.config);
    }
    let mut top = top.clone();
    for need in &merged.untrusted {
        match &need.part {
            Part::Plugin(id) => {
                top.file.plugin.remove(id);
            }
            Part::Web => {
                if let Some(web) = top.file.web.as_mut() {
                    if matches!(need.act, Act::ReachPrivateAddresses) {
                        web.allow_private_addresses = None;
                    } else {
                        // The key and the endpoint go together: neither the user's
                        // key with the project's endpoint nor the other way round.
                        web.search_key_env = None;
                        web.search_endpoint = None;
                    }
                }
            }
            Part::Limits => {
                let key = need.key.trim_start_matches("limits.");
                top.file.limits.remove(key);
            }
            Part::Trace => top.file.trace = None,
            Part::Test => {
                if let Some(test) = top.file.test.as_mut() {
                    test.cache = None;
                }
            }
            Part::Model(_) => {}
        }
    }
    let mut config = merge(base, &top)?.config;
    config.withheld = merged.untrusted;
    Ok(config)
}

/// One named table (`[model.NAME]`, `[plugin."ID"]`): its name, the layers that
/// hold it (lowest first) with their table, and the topmost of them.
type Named<'a, T> = (&'a String, Vec<(&'a Layer, &'a T)>, &'a Layer);

/// Each name of a table kind any layer holds.
fn by_name<'a, T>(
    layers: &[&'a Layer],
    tables: impl Fn(&'a File) -> &'a BTreeMap<String, T>,
) -> Vec<Named<'a, T>> {
    let names: BTreeSet<&String> = layers.iter().flat_map(|l| tables(&l.file).keys()).collect();
    names
        .into_iter()
        .filter_map(|name| {
            let defining: Vec<(&Layer, &T)> = layers
                .iter()
                .filter_map(|l| Some((*l, tables(&l.file).get(name)?)))
                .collect();
            let top = defining.last()?.0;
            Some((name, defining, top))
        })
        .collect()
}

fn models(layers: &[&Layer]) -> Result<BTreeMap<String, ModelConfig>, ConfigError> {
    let mut out = BTreeMap::new();
    for (name, defining, top_layer) in by_name(layers, |f| &f.model) {
        let header = format!("[model.{name}]");
        let provider = defining
            .iter()
            .rev()
            .find_map(|(_, m)| m.provider.as_ref().map(|p| *p.get_ref()));
        let provider = match provider {
            Some(provider) => provider,
            None => {
                return Err(top_layer.error(
                    top_layer.table_line(&header),
                    format!("model.{name}: missing field `provider`"),
                ))
            }
        };
        let path = defining
            .iter()
            .rev()
            .find_map(|(layer, m)| m.path.as_ref().map(|p| layer.dir().join(p.get_ref())));
        if provider == ProviderKind::Script && path.is_none() {
            return Err(top_layer.error(
                top_layer.table_line(&header),
                format!("model.{name}: the script provider needs path = \"...\""),
            ));
        }
        let value = |get: &dyn Fn(&ModelFile) -> Option<String>| {
            defining.iter().rev().find_map(|(_, m)| get(m))
        };
        out.insert(
            name.clone(),
            ModelConfig {
                provider,
                base_url: value(&|m| m.base_url.as_ref().map(|v| v.get_ref().clone())),
                model: value(&|m| m.model.clone()),
                api_key_env: value(&|m| m.api_key_env.as_ref().map(|v| v.get_ref().clone())),
                timeout_s: defining.iter().rev().find_map(|(_, m)| m.timeout_s),
                retries: defining.iter().rev().find_map(|(_, m)| m.retries),
                path,
            },
        );
    }
    Ok(out)
}

fn plugins(layers: &[&Layer]) -> Result<BTreeMap<String, PluginConfig>, ConfigError> {
    let mut out = BTreeMap::new();
    for (id, defining, top_layer) in by_name(layers, |f| &f.plugin) {
        let Some((command_layer, command)) = defining
            .iter()
            .rev()
            .find_map(|(l, p)| Some((*l, p.command.as_ref()?.get_ref().clone())))
        else {
            return Err(top_layer.error(
                top_layer.table_line(&format!("\"{id}\"")),
                format!("plugin.\"{id}\": missing field `command`"),
            ));
        };
        out.insert(
            id.clone(),
            PluginConfig {
                command,
                args: defining
                    .iter()
                    .rev()
                    .find_map(|(_, p)| p.args.as_ref().map(|a| a.get_ref().clone()))
                    .unwrap_or_default(),
                env: defining
                    .iter()
                    .rev()
                    .find_map(|(_, p)| p.env.as_ref().map(|e| e.get_ref().clone()))
                    .unwrap_or_default(),
                conflicts: defining
                    .iter()
                    .rev()
                    .find_map(|(_, p)| p.conflicts.clone())
                    .unwrap_or_default(),
                dir: command_layer.dir(),
            },
        );
    }
    Ok(out)
}

fn web(layers: &[&Layer]) -> WebConfig {
    let webs: Vec<&WebFile> = layers.iter().filter_map(|l| l.file.web.as_ref()).collect();
    let last = |get: &dyn Fn(&WebFile) -> Option<String>| webs.iter().rev().find_map(|w| get(w));
    WebConfig {
        search_endpoint: last(&|w| w.search_endpoint.as_ref().map(|v| v.get_ref().clone())),
        search_key_env: last(&|w| w.search_key_env.as_ref().map(|v| v.get_ref().clone())),
        allow_private_addresses: webs
            .iter()
            .rev()
            .find_map(|w| w.allow_private_addresses.as_ref().map(|v| *v.get_ref()))
            .unwrap_or(false),
        max_fetch_bytes: webs.iter().rev().find_map(|w| w.max_fetch_bytes),
    }
}

/// The keys of `top` (not trusted) that act on the world, in file order.
fn needs(base: Option<&Layer>, top: &Layer, merged: &Config) -> Vec<TrustNeed> {
    let mut out = Vec::new();
    let mut need = |offset: Option<usize>, key: String, part: Part, act: Act| {
        out.push(TrustNeed {
            file: top.path.clone(),
            line: offset.and_then(|o| top.line(o)),
            key,
            part,
            act,
        });
    };
    let base_file = base.map(|b| &b.file);
    for (id, plugin) in &top.file.plugin {
        let part = || Part::Plugin(id.clone());
        let started = plugin
            .command
            .as_ref()
            .map(Spanned::span)
            .map(|s| (s, "command"));
        let started = started.or(plugin.args.as_ref().map(|a| (a.span(), "args")));
        if let Some((span, key)) = started {
            need(
                Some(span.start),
                format!("plugin.\"{id}\".{key}"),
                part(),
                Act::StartProgram,
            );
        }
        if let Some(env) = &plugin.env {
            if let Some(variable) = env.get_ref().values().next() {
                let act = Act::HandVariable {
                    variable: variable.clone(),
                };
                need(
                    Some(env.span().start),
                    format!("plugin.\"{id}\".env"),
                    part(),
                    act,
                );
            }
        }
    }
    for (name, model) in &top.file.model {
        let part = || Part::Model(name.clone());
        let mut redirected = false;
        if let Some(variable) = &model.api_key_env {
            let act = Act::HandVariable {
                variable: variable.get_ref().clone(),
            };
            let key = format!("model.{name}.api_key_env");
            need(Some(variable.span().start), key, part(), act);
        } else if let Some(variable) = merged.models.get(name).and_then(|m| m.api_key_env.clone()) {
            // The key is the user's: the project may not point it anywhere else,
            // not even at a loopback address.
            let redirect = model.base_url.as_ref().map(|v| (v.span(), "base_url"));
            let redirect = redirect.or(model.provider.as_ref().map(|v| (v.span(), "provider")));
            if let Some((span, key)) = redirect {
                let act = Act::RedirectKey { variable };
                need(Some(span.start), format!("model.{name}.{key}"), part(), act);
                redirected = true;
            }
        }
        if let Some(url) = model.base_url.as_ref().filter(|_| !redirected) {
            if !is_loopback_url(url.get_ref()) {
                let key = format!("model.{name}.base_url");
                need(Some(url.span().start), key, part(), Act::SendModelRequests);
            }
        }
        if let Some(path) = &model.path {
            if escapes(&top.dir(), path.get_ref()) {
                let key = format!("model.{name}.path");
                need(Some(path.span().start), key, part(), Act::ReadOutside);
            }
        }
    }
    if let Some(web) = &top.file.web {
        let mut redirected = false;
        if let Some(variable) = &web.search_key_env {
            let act = Act::HandVariable {
                variable: variable.get_ref().clone(),
            };
            need(
                Some(variable.span().start),
                "web.search_key_env".into(),
                Part::Web,
                act,
            );
        } else if let (Some(endpoint), Some(variable)) =
            (&web.search_endpoint, merged.web.search_key_env.clone())
        {
            let act = Act::RedirectKey { variable };
            need(
                Some(endpoint.span().start),
                "web.search_endpoint".into(),
                Part::Web,
                act,
            );
            redirected = true;
        }
        if let Some(endpoint) = web.search_endpoint.as_ref().filter(|_| !redirected) {
            if !is_loopback_url(endpoint.get_ref()) {
                need(
                    Some(endpoint.span().start),
                    "web.search_endpoint".into(),
                    Part::Web,
                    Act::SendSearchQueries,
                );
            }
        }
        let base_allows = base_file
            .and_then(|f| f.web.as_ref())
            .and_then(|w| w.allow_private_addresses.as_ref())
            .is_some_and(|v| *v.get_ref());
        if let Some(allow) = web
            .allow_private_addresses
            .as_ref()
            .filter(|v| *v.get_ref())
        {
            if !base_allows {
                let key = "web.allow_private_addresses".to_owned();
                need(
                    Some(allow.span().start),
                    key,
                    Part::Web,
                    Act::ReachPrivateAddresses,
                );
            }
        }
    }
    let endpoint = top
        .file
        .trace
        .as_ref()
        .and_then(|t| t.otlp_endpoint.as_ref());
    if let Some(endpoint) = endpoint {
        let key = "trace.otlp_endpoint".to_owned();
        need(
            Some(endpoint.span().start),
            key,
            Part::Trace,
            Act::SendTraces,
        );
    }
    let base_limits = base.map_or_else(Limits::default, |b| limits(&[b]));
    for (key, value) in &top.file.limits {
        let allowed = limit(&base_limits, key);
        if *value.get_ref() > allowed {
            let act = Act::RaiseLimit { base: allowed };
            need(
                Some(value.span().start),
                format!("limits.{key}"),
                Part::Limits,
                act,
            );
        }
    }
    out.extend(test_table::need(top));
    out.sort_by_key(|n| n.line);
    out
}

/// True when `relative`, joined to `dir`, names a file outside `dir`: an absolute
/// path, a `..` that climbs out, or a link inside that points out. A path that
/// does not exist yet (a cache folder made at the first write) is judged by its
/// nearest existing ancestor, so a link on the way out counts too; the part not
/// there yet may hold no `..`. Anything that cannot be resolved is outside (fail
/// closed): the folder itself, an ancestor that exists but cannot be resolved (a
/// dangling link, a loop, no permission).
fn escapes(dir: &Path, relative: &str) -> bool {
    let relative = Path::new(relative);
    let mut depth = 0usize;
    for component in relative.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => return true,
        }
    }
    let base = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(real_base) = std::fs::canonicalize(base) else {
        return true;
    };
    let target = base.join(relative);
    let mut existing = target.as_path();
    loop {
        match std::fs::symlink_metadata(existing) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return true,
            Ok(_) => {
                return std::fs::canonicalize(existing)
                    .map_or(true, |real| !real.starts_with(&real_base));
            }
        }
        // Not there yet: it will be made under its parent, by name.
        let (Some(Component::Normal(_)), Some(parent)) =
            (existing.components().next_back(), existing.parent())
        else {
            return true;
        };
        existing = parent;
    }
}

fn line_of(text: &str, offset: usize) -> u32 {
    let upto = text.get(..offset.min(text.len())).unwrap_or(text);
    upto.matches('\n').count() as u32 + 1
}

fn key_span(text: &str, needle: &str) -> Option<Range<usize>> {
    text.find(needle).map(|at| at..at + needle.len())
}

mod limit_table;
mod loopback;
mod test_table;

pub(super) use limit_table::limit;
use limit_table::limits;
use loopback::is_loopback_url;

#[cfg(test)]
mod tests;
