//! Which addresses `fetch` may reach: the ranges it refuses (loopback, private,
//! link-local, shared, unique-local, multicast, documentation, reserved, and the
//! IPv6 forms that embed such an IPv4 address) and the policy that applies them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A range `fetch` refuses, named the way the failure text names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// 127.0.0.0/8, `::1`.
    Loopback,
    /// 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, `fec0::/10`.
    Private,
    /// 169.254.0.0/16, `fe80::/10`.
    LinkLocal,
    /// 100.64.0.0/10 (carrier-grade NAT).
    Shared,
    /// `fc00::/7`.
    UniqueLocal,
    /// 224.0.0.0/4, `ff00::/8`.
    Multicast,
    /// 0.0.0.0, `::`.
    Unspecified,
    /// 255.255.255.255.
    Broadcast,
    /// 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// Every other special-purpose range (0.0.0.0/8, 192.0.0.0/24, 198.18.0.0/15,
    /// 240.0.0.0/4, IPv4-compatible IPv6, Teredo, discard, local NAT64, ...).
    Reserved,
}

impl Blocked {
    /// The range as the failure text names it: "a loopback address", ...
    pub fn describe(self) -> &'static str {
        match self {
            Blocked::Loopback => "a loopback address",
            Blocked::Private => "a private address",
            Blocked::LinkLocal => "a link-local address",
            Blocked::Shared => "a shared (carrier-grade NAT) address",
            Blocked::UniqueLocal => "a unique-local address",
            Blocked::Multicast => "a multicast address",
            Blocked::Unspecified => "the unspecified address",
            Blocked::Broadcast => "the broadcast address",
            Blocked::Documentation => "a documentation address",
            Blocked::Reserved => "a reserved address",
        }
    }
}

/// The range `ip` falls in when `fetch` must refuse it, None for a public address.
pub fn classify(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn classify_v4(ip: Ipv4Addr) -> Option<Blocked> {
    const RANGES: [([u8; 4], u32, Blocked); 16] = [
        ([0, 0, 0, 0], 32, Blocked::Unspecified),
        ([255, 255, 255, 255], 32, Blocked::Broadcast),
        ([0, 0, 0, 0], 8, Blocked::Reserved),
        ([10, 0, 0, 0], 8, Blocked::Private),
        ([100, 64, 0, 0], 10, Blocked::Shared),
        ([127, 0, 0, 0], 8, Blocked::Loopback),
        ([169, 254, 0, 0], 16, Blocked::LinkLocal),
        ([172, 16, 0, 0], 12, Blocked::Private),
        ([192, 0, 0, 0], 24, Blocked::Reserved),
        ([192, 0, 2, 0], 24, Blocked::Documentation),
        ([192, 88, 99, 0], 24, Blocked::Reserved),
        ([192, 168, 0, 0], 16, Blocked::Private),
        ([198, 18, 0, 0], 15, Blocked::Reserved),
        ([198, 51, 100, 0], 24, Blocked::Documentation),
        ([203, 0, 113, 0], 24, Blocked::Documentation),
        ([224, 0, 0, 0], 4, Blocked::Multicast),
    ];
    if in_v4(ip, [240, 0, 0, 0], 4) {
        return Some(if ip == Ipv4Addr::BROADCAST {
            Blocked::Broadcast
        } else {
            Blocked::Reserved
        });
    }
    RANGES
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map(|(_, _, blocked)| *blocked)
}

fn in_v6(ip: Ipv6Addr, net: u128, prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    (u128::from(ip) & mask) == (net & mask)
}

/// The IPv4 address in the low 32 bits.
fn low_v4(bits: u128) -> Ipv4Addr {
    Ipv4Addr::from((bits & 0xffff_ffff) as u32)
}

fn classify_v6(ip: Ipv6Addr) -> Option<Blocked> {
    let bits = u128::from(ip);
    if ip.is_unspecified() {
        return Some(Blocked::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Blocked::Loopback);
    }
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d): the
    // IPv4 address decides; NAT64 (64:ff9b::/96) likewise.
    if in_v6(ip, 0xffff_0000_0000, 96)
        || in_v6(ip, 0xffff_0000_0000_0000, 96)
        || in_v6(ip, 0x0064_ff9b << 96, 96)
    {
        return classify_v4(low_v4(bits));
    }
    // 6to4 (2002::/16) carries its IPv4 address in bits 16..48.
    if in_v6(ip, 0x2002 << 112, 16) {
        let embedded = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        return classify_v4(embedded);
    }
    const RANGES: [(u128, u32, Blocked); 10] = [
        (0, 96, Blocked::Reserved),                      // IPv4-compatible
        (0x0064_ff9b_0001 << 80, 48, Blocked::Reserved), // local-use NAT64
        (0x0100 << 112, 64, Blocked::Reserved),          // discard-only
        (0x2001_0db8 << 96, 32, Blocked::Documentation), // documentation
        (0x2001 << 112, 23, Blocked::Reserved),          // IETF assignments, Teredo
        (0x3fff << 112, 20, Blocked::Documentation),     // documentation
        (0xfc00 << 112, 7, Blocked::UniqueLocal),        // unique-local
        (0xfe80 << 112, 10, Blocked::LinkLocal),         // link-local
        (0xfec0 << 112, 10, Blocked::Private),           // site-local
        (0xff00 << 112, 8, Blocked::Multicast),          // multicast
    ];
    RANGES
        .iter()
        .find(|(net, prefix, _)| in_v6(ip, *net, *prefix))
        .map(|(_, _, blocked)| *blocked)
}

/// Which addresses `fetch` may connect to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    allow_private: bool,
    exceptions: Vec<SocketAddr>,
}

impl AddressPolicy {
    /// Public addresses only (`allow_private_addresses = false`).
    pub fn public_only() -> Self {
        AddressPolicy::default()
    }

    /// Every address (`allow_private_addresses = true`).
    pub fn allow_all() -> Self {
        AddressPolicy {
            allow_private: true,
            exceptions: Vec::new(),
        }
    }

    /// The policy `allow_private_addresses` sets.
    pub fn from_setting(allow_private_addresses: bool) -> Self {
        if allow_private_addresses {
            AddressPolicy::allow_all()
        } else {
            AddressPolicy::public_only()
        }
    }

    /// Also allows exactly `addr` (address and port), e.g. one loopback test server.
    pub fn with_exception(mut self, addr: SocketAddr) -> Self {
        self.exceptions.push(addr);
        self
    }

    /// Why `addr` is refused, or Ok when `fetch` may connect to it.
    pub fn check(&self, addr: SocketAddr) -> Result<(), Blocked> {
        if self.allow_private || self.exceptions.contains(&addr) {
            return Ok(());
        }
        classify(addr.ip()).map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Option<Blocked> {
        classify(text.parse().unwrap())
    }

    #[test]
    fn ipv4_special_ranges_are_refused() {
        for (ip, want) in [
            ("127.0.0.1", Blocked::Loopback),
            ("127.255.3.4", Blocked::Loopback),
            ("10.1.2.3", Blocked::Private),
            ("172.16.0.1", Blocked::Private),
            ("172.31.255.255", Blocked::Private),
            ("192.168.1.1", Blocked::Private),
            ("169.254.169.254", Blocked::LinkLocal),
            ("100.64.0.1", Blocked::Shared),
            ("100.127.255.255", Blocked::Shared),
            ("0.0.0.0", Blocked::Unspecified),
            ("0.1.2.3", Blocked::Reserved),
            ("224.0.0.1", Blocked::Multicast),
            ("239.255.255.250", Blocked::Multicast),
            ("255.255.255.255", Blocked::Broadcast),
            ("240.0.0.1", Blocked::Reserved),
            ("192.0.2.7", Blocked::Documentation),
            ("198.51.100.7", Blocked::Documentation),
            ("203.0.113.7", Blocked::Documentation),
            ("198.18.0.1", Blocked::Reserved),
            ("192.0.0.8", Blocked::Reserved),
        ] {
            assert_eq!(of(ip), Some(want), "{ip}");
        }
    }

    #[test]
    fn ipv4_public_addresses_pass() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "192.169.0.1",
            "93.184.216.34",
            "223.255.255.255",
        ] {
            assert_eq!(of(ip), None, "{ip}");
        }
    }

    #[test]
    fn ipv6_special_ranges_and_embedded_ipv4_are_refused() {
        for (ip, want) in [
            ("::1", Blocked::Loopback),
            ("::", Blocked::Unspecified),
            ("::ffff:127.0.0.1", Blocked::Loopback),
            ("::ffff:10.0.0.1", Blocked::Private),
            ("::ffff:0:192.168.0.1", Blocked::Private),
            ("::127.0.0.1", Blocked::Reserved),
            ("::8.8.8.8", Blocked::Reserved),
            ("64:ff9b::7f00:1", Blocked::Loopback),
            ("2002:7f00:1::", Blocked::Loopback),
            ("2002:a9fe:a9fe::1", Blocked::LinkLocal),
            ("fc00::1", Blocked::UniqueLocal),
            ("fd12:3456::1", Blocked::UniqueLocal),
            ("fe80::1", Blocked::LinkLocal),
            ("febf::1", Blocked::LinkLocal),
            ("fec0::1", Blocked::Private),
            ("ff02::1", Blocked::Multicast),
            ("2001:db8::1", Blocked::Documentation),
            ("2001::1", Blocked::Reserved),
            ("100::1", Blocked::Reserved),
        ] {
            assert_eq!(of(ip), Some(want), "{ip}");
        }
    }

    #[test]
    fn ipv6_public_addresses_pass() {
        for ip in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(of(ip), None, "{ip}");
        }
    }

    #[test]
    fn the_policy_applies_the_setting_and_exact_exceptions() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let other: SocketAddr = "127.0.0.1:8081".parse().unwrap();
        let public: SocketAddr = "8.8.8.8:443".parse().unwrap();
        assert_eq!(
            AddressPolicy::public_only().check(local),
            Err(Blocked::Loopback)
        );
        assert_eq!(AddressPolicy::public_only().check(public), Ok(()));
        assert_eq!(AddressPolicy::from_setting(true).check(local), Ok(()));
        let policy = AddressPolicy::public_only().with_exception(local);
        assert_eq!(policy.check(local), Ok(()));
        assert_eq!(policy.check(other), Err(Blocked::Loopback));
    }
}
