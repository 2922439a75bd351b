//! Whether a URL a configuration names stays on this machine: an `http` or `https`
//! URL whose host is a loopback address (`127.0.0.0/8`, `[::1]`) or `localhost`.
//! A project configuration's `base_url` or `search_endpoint` that does is data (a
//! newcomer's local model works untrusted); any other needs trust.
//!
//! The engine does not parse URLs the way the HTTP client does (the WHATWG URL
//! standard), so this reading only says yes to a plain shape both read alike:
//! `scheme://host[:port]` then `/`, `?`, `#` or the end, with no user name, no
//! percent sign, no backslash and nothing the standard would strip or rewrite.
//! Anything else (`127.1`, `0x7f.0.0.1`, `localhost.`, `[::ffff:127.0.0.1]`, a
//! user name) is read as leaving the machine and needs trust, which is the safe
//! side to err on.

use std::net::{Ipv4Addr, Ipv6Addr};

/// True when `url` is an `http` or `https` URL whose host is a loopback address or
/// `localhost`, written plainly.
pub(crate) fn is_loopback_url(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return false;
    }
    let authority = match rest.find(['/', '?', '#']) {
        Some(end) => &rest[..end],
        None => rest,
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || ".:[]-".contains(c);
    if authority.is_empty() || !authority.chars().all(plain) {
        // A user name (`@`), a percent sign, a backslash, a space or a control
        // character: a shape the client may read otherwise.
        return false;
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((v6, port)) => {
                let loopback = v6
                    .parse::<Ipv6Addr>()
                    .is_ok_and(|ip| ip == Ipv6Addr::LOCALHOST);
                (loopback, port)
            }
            None => return false,
        },
        None => {
            let (host, port) = match authority.find(':') {
                Some(colon) => authority.split_at(colon),
                None => (authority, ""),
            };
            let loopback = host.eq_ignore_ascii_case("localhost")
                || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
            (loopback, port)
        }
    };
    let port_ok = match port.strip_prefix(':') {
        Some(digits) => digits.chars().all(|c| c.is_ascii_digit()),
        None => port.is_empty(),
    };
    host && port_ok
}

#[cfg(test)]
mod tests {
    use super::is_loopback_url;

    #[test]
    fn loopback_addresses_and_localhost_stay_on_this_machine() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1",
            "https://127.255.3.4:1/x?y#z",
            "http://localhost:11434/v1",
            "HTTP://LocalHost/v1",
            "http://[::1]:8080/v1",
            "http://[::1]",
            "http://127.0.0.1:/v1",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
    }

    #[test]
    fn anything_else_leaves_it() {
        for url in [
            "https://api.openai.com/v1",
            "http://attacker.example/v1",
            "http://10.0.0.1/v1",
            "http://169.254.169.254/latest",
            "http://0.0.0.0:8080/v1",
            "http://[::]:8080",
            "http://[::ffff:127.0.0.1]/v1",
            "http://127.0.0.1.nip.io/v1",
            "http://localhost.attacker.example/v1",
            "http://localhost./v1",
            "http://127.1/v1",
            "http://0x7f.0.0.1/v1",
            "http://2130706433/v1",
            "http://127.0.0.1@attacker.example/v1",
            "http://attacker.example\\@127.0.0.1/v1",
            "http://attacker.example#@127.0.0.1/v1",
            "http://127.0.0.1%2f@attacker.example/v1",
            "http://127.0.0.1\t.attacker.example/v1",
            " http://127.0.0.1/v1",
            "http://127.0.0.1:80x/v1",
            "http://[::1/v1",
            "ftp://127.0.0.1/v1",
            "file:///tmp/socket",
            "127.0.0.1:8080/v1",
            "http:///v1",
            "",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
