//! Trace and span ids derived from the run: the same run gives the same ids, two
//! runs different ones, and no id is all zeroes (OTLP treats that as invalid).

use promptforge_engine::trace::SpanId;

/// The run id's 64 bits: its hex digits after `run-`, or a hash of the text
/// when it is not in that form.
fn run_bits(run_id: &str) -> u64 {
    let hex = run_id.strip_prefix("run-").unwrap_or(run_id);
    u64::from_str_radix(hex, 16).unwrap_or_else(|_| {
        // FNV-1a: any stable hash will do for ids.
        run_id.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
    })
}

/// SplitMix64's finaliser: a bijection of `u64` that scatters nearby inputs.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Never zero: an all-zero id is invalid.
fn non_zero(value: u64) -> u64 {
    if value == 0 {
        1
    } else {
        value
    }
}

/// The trace id of the run `run_id`: 16 bytes, the run id's bits then a
/// mix of them.
pub fn trace_id(run_id: &str) -> [u8; 16] {
    let bits = run_bits(run_id);
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&bits.to_be_bytes());
    id[8..].copy_from_slice(&non_zero(mix(bits)).to_be_bytes());
    id
}

/// The OTLP span id of the trace span `span` of the run `run_id`: 8 bytes,
/// distinct for distinct spans of a run (a bijection of the span id) and
/// unlike another run's (collectors such as Phoenix key spans by span id).
pub fn span_id(run_id: &str, span: SpanId) -> [u8; 8] {
    non_zero(mix(mix(run_bits(run_id)) ^ span)).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_deterministic_distinct_and_non_zero() {
        let run = "run-00000000000000ab";
        assert_eq!(trace_id(run), trace_id(run));
        assert_eq!(&trace_id(run)[..8], &[0, 0, 0, 0, 0, 0, 0, 0xab]);
        assert_ne!(trace_id(run), trace_id("run-00000000000000ac"));
        assert_ne!(trace_id("run-0000000000000000"), [0; 16]);
        let spans: std::collections::BTreeSet<_> = (1..=1000).map(|s| span_id(run, s)).collect();
        assert_eq!(spans.len(), 1000);
        assert!(!spans.contains(&[0; 8]));
        assert_ne!(span_id(run, 1), span_id("run-00000000000000ac", 1));
        assert_ne!(trace_id("not a run id"), trace_id("another"));
    }
}
