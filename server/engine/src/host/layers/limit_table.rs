//! The `[limits]` table: each layer's limits laid over the defaults, key by key.

use super::Layer;
use crate::host::config::Limits;

/// The limits every layer sets, the topmost winning, over the defaults.
pub(super) fn limits(layers: &[&Layer]) -> Limits {
    let mut limits = Limits::default();
    for layer in layers {
        for (key, value) in &layer.file.limits {
            set_limit(&mut limits, key, *value.get_ref());
        }
    }
    limits
}

/// The limit `key` of `limits` (0 for a key that is none).
pub(in crate::host) fn limit(limits: &Limits, key: &str) -> u64 {
    match key {
        "lua_memory_mib" => limits.lua_memory_mib,
        "lua_instructions" => limits.lua_instructions,
        "call_depth" => u64::from(limits.call_depth),
        "fanout_concurrency" => u64::from(limits.fanout_concurrency),
        "tool_output_bytes" => limits.tool_output_bytes,
        "log_bytes" => limits.log_bytes,
        "store_bytes" => limits.store_bytes,
        "store_files" => limits.store_files,
        "trace_bytes" => limits.trace_bytes,
        "walk_sections" => limits.walk_sections,
        _ => 0,
    }
}

fn set_limit(limits: &mut Limits, key: &str, value: u64) {
    let narrow = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    match key {
        "lua_memory_mib" => limits.lua_memory_mib = value,
        "lua_instructions" => limits.lua_instructions = value,
        "call_depth" => limits.call_depth = narrow(value),
        "fanout_concurrency" => limits.fanout_concurrency = narrow(value),
        "tool_output_bytes" => limits.tool_output_bytes = value,
        "log_bytes" => limits.log_bytes = value,
        "store_bytes" => limits.store_bytes = value,
        "store_files" => limits.store_files = value,
        "trace_bytes" => limits.trace_bytes = value,
        "walk_sections" => limits.walk_sections = value,
        _ => {}
    }
}
