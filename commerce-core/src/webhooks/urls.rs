//! Where events may be sent: `https` URLs of public hosts, unless the platform allows more.
//!
//! "Public" is decided by one table per address family ([`V4_RANGES`], [`V6_RANGES`]): every
//! range of the IANA IPv4 and IPv6 Special-Purpose Address Registries, multicast, and on IPv6
//! everything outside global unicast `2000::/3`. IPv6 forms that carry an IPv4 address are
//! judged by that address (IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`, NAT64
//! `64:ff9b::/96`, and the network-specific NAT64 prefixes the platform names:
//! [`UrlPolicy::nat64_prefixes`]) or refused outright where the address is not reliably the
//! destination (6to4 `2002::/16`, Teredo `2001::/32`, local-use NAT64 `64:ff9b:1::/48` unless
//! named, ISATAP interface ids `…:0:5efe:a.b.c.d` and `…:200:5efe:a.b.c.d`): see [`V6_RANGES`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use super::nat64::{Nat64Prefixes, is_isatap};
pub use crate::limits::MAX_URL;

/// Which non-public addresses a [`UrlPolicy`] lets through. In settings: `"public"`,
/// `"public_and_loopback"`, `"any"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Addresses {
    /// Public addresses only (the default, and the only choice for production).
    #[default]
    Public,
    /// Public addresses and loopback (`127.0.0.0/8`, `::1`, and `::ffff:127.0.0.0/104`, which
    /// is the same socket address): a receiver on the same machine, as in the sandbox.
    /// Every other non-public address is still refused.
    PublicAndLoopback,
    /// Every address, private networks included: for tests of a private network only, or a
    /// platform whose egress proxy enforces the rules
    /// (`DispatcherConfig::proxy`, feature `webhooks`).
    Any,
}

/// What the platform allows besides `https` URLs of public addresses (nothing, by default:
/// [`UrlPolicy::STRICT`]; the sandbox allows `http` and loopback: [`UrlPolicy::SANDBOX`]).
/// Applied at registration and again by the dispatcher when it connects.
///
/// In settings ([`Config::webhook_urls`](crate::config::Config::webhook_urls)), every field optional:
/// `{"allow_http": true, "addresses": "public_and_loopback", "nat64_prefixes":
/// ["2001:db8:64::/96"]}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct UrlPolicy {
    /// Plain `http` URLs.
    pub allow_http: bool,
    /// Which addresses besides public ones.
    pub addresses: Addresses,
    /// The network-specific NAT64 prefixes (RFC 6052) of the platform's network, none by
    /// default: an address inside one is judged by the IPv4 address it embeds, as the
    /// well-known `64:ff9b::/96` always is (see [`Nat64Prefix`](super::Nat64Prefix)).
    pub nat64_prefixes: Nat64Prefixes,
}

impl UrlPolicy {
    /// A `UrlPolicy` of its fields, in their order.
    pub fn new(allow_http: bool, addresses: Addresses, nat64_prefixes: Nat64Prefixes) -> Self {
        Self {
            allow_http,
            addresses,
            nat64_prefixes,
        }
    }
}

impl UrlPolicy {
    /// `https` to public addresses only (the default).
    pub const STRICT: UrlPolicy = UrlPolicy {
        allow_http: false,
        addresses: Addresses::Public,
        nat64_prefixes: Nat64Prefixes::NONE,
    };

    /// The sandbox's: `http` too, and loopback receivers (`http://127.0.0.1:4000/...`),
    /// nothing else private.
    pub const SANDBOX: UrlPolicy = UrlPolicy {
        allow_http: true,
        addresses: Addresses::PublicAndLoopback,
        nat64_prefixes: Nat64Prefixes::NONE,
    };

    /// The same policy, with addresses inside these network-specific NAT64 prefixes judged by
    /// the IPv4 address they embed.
    pub fn with_nat64_prefixes(mut self, prefixes: Nat64Prefixes) -> Self {
        self.nat64_prefixes = prefixes;
        self
    }

    /// Whether `ip` may be connected to under this policy.
    pub fn allows(self, ip: IpAddr) -> bool {
        matches!(
            (classify(ip, &self.nat64_prefixes), self.addresses),
            (Class::Public, _)
                | (_, Addresses::Any)
                | (Class::Loopback, Addresses::PublicAndLoopback)
        )
    }
}

/// Why a URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlProblem {
    /// Not an absolute URL with a host, or over [`MAX_URL`] characters, or with a user name.
    #[error("not a valid URL")]
    Invalid,
    /// Not `https` (or `http` where allowed).
    #[error("the URL must use https")]
    NotHttps,
    /// The host is, or resolves to, an address the policy does not allow; or the host name
    /// does not resolve (in time). One answer for both, so that registering URLs cannot
    /// probe which internal names exist.
    #[error("the host is not a public address")]
    NotPublic,
}

/// Checks a URL's form: absolute `https` (or `http` where allowed), a host, no credentials,
/// at most [`MAX_URL`] characters, and, when the host is an address, an allowed one
/// ([`check_address`]). An address may be written in any form URL parsers accept
/// (`http://2130706433/`, `http://0x7f.1/`, `http://0177.0.0.1/` and `http://127.1/` are all
/// `127.0.0.1`): it is judged as parsed. Host names are checked when resolved (at
/// registration and again when connecting).
pub fn check_url(text: &str, policy: UrlPolicy) -> Result<Url, UrlProblem> {
    // `https:///host` is read as `https://host/` by URL parsers: refuse the extra slash.
    let authority = text.split_once("://").map(|(_, rest)| rest);
    if text.chars().count() > MAX_URL
        || text.trim() != text
        || authority.is_none_or(|rest| rest.starts_with('/'))
    {
        return Err(UrlProblem::Invalid);
    }
    let url = Url::parse(text).map_err(|_| UrlProblem::Invalid)?;
    match url.scheme() {
        "https" => {}
        "http" if policy.allow_http => {}
        "http" => return Err(UrlProblem::NotHttps),
        _ => return Err(UrlProblem::Invalid),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlProblem::Invalid);
    }
    let literal = match url.host() {
        None => return Err(UrlProblem::Invalid),
        Some(Host::Domain("")) => return Err(UrlProblem::Invalid),
        Some(Host::Domain(_)) => None,
        Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
    };
    if let Some(ip) = literal {
        check_address(ip, policy)?;
    }
    Ok(url)
}

/// Refuses an address the policy does not allow ([`UrlPolicy::allows`]): by default every
/// address that is not public (see the module's docs).
pub fn check_address(ip: IpAddr, policy: UrlPolicy) -> Result<(), UrlProblem> {
    if policy.allows(ip) {
        Ok(())
    } else {
        Err(UrlProblem::NotPublic)
    }
}

/// What an address is, for a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Globally reachable unicast, in no special-purpose range.
    Public,
    /// `127.0.0.0/8`, `::1` (and `::ffff:127.0.0.0/104`, the same socket address).
    Loopback,
    /// Anything else.
    NonPublic,
}

/// What an IPv4 range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum V4 {
    Loopback,
    NonPublic,
}

/// The IPv4 ranges that are not public: the IANA IPv4 Special-Purpose Address Registry
/// (all of it, including the few entries it marks globally reachable, such as the anycast
/// addresses of `192.0.0.0/24` and AS112: no webhook receiver lives there) and multicast.
/// Each row: first address, prefix length, what it is, what defines it.
#[rustfmt::skip]
const V4_RANGES: &[(Ipv4Addr, u8, V4, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, V4::NonPublic, "\"this network\", RFC 791"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, V4::NonPublic, "private, RFC 1918"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, V4::NonPublic, "shared address space (CGNAT), RFC 6598"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, V4::Loopback, "loopback, RFC 1122"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, V4::NonPublic, "link-local (cloud metadata), RFC 3927"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, V4::NonPublic, "private, RFC 1918"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, V4::NonPublic, "IETF protocol assignments, RFC 6890"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, V4::NonPublic, "documentation TEST-NET-1, RFC 5737"),
    (Ipv4Addr::new(192, 31, 196, 0), 24, V4::NonPublic, "AS112-v4, RFC 7535"),
    (Ipv4Addr::new(192, 52, 193, 0), 24, V4::NonPublic, "AMT, RFC 7450"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, V4::NonPublic, "6to4 relay anycast (deprecated), RFC 7526"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, V4::NonPublic, "private, RFC 1918"),
    (Ipv4Addr::new(192, 175, 48, 0), 24, V4::NonPublic, "AS112 direct delegation, RFC 7534"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, V4::NonPublic, "benchmarking, RFC 2544"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, V4::NonPublic, "documentation TEST-NET-2, RFC 5737"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, V4::NonPublic, "documentation TEST-NET-3, RFC 5737"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, V4::NonPublic, "multicast, RFC 5771"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, V4::NonPublic, "reserved and limited broadcast, RFC 1112, RFC 919"),
];

/// How an IPv6 range is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum V6 {
    /// `::1`.
    Loopback,
    /// Not public, whatever follows the prefix.
    NonPublic,
    /// Carries an IPv4 address in its last 32 bits that the OS connects to as IPv4: judged
    /// exactly as that address (loopback included).
    Mapped,
    /// Carries an IPv4 address in its last 32 bits that a translator reaches: public when that
    /// address is, else not public (never loopback: a translator does not reach this host).
    Embedded,
}

/// The IPv6 ranges that are not public or are judged by an embedded IPv4 address: the IANA
/// IPv6 Special-Purpose Address Registry, the deprecated site-local and IPv4-compatible forms,
/// and multicast; the first row that holds an address decides (more specific rows first).
/// Outside these rows, only global unicast `2000::/3` (RFC 4291) is public.
///
/// Decided here: NAT64 `64:ff9b::/96` is judged by its embedded address, because on an
/// IPv6-only network with DNS64 it is how every IPv4-only receiver is reached (and the
/// translator connects to that address, so the rules hold on it); so is an address of a
/// network-specific prefix the platform names ([`UrlPolicy::nat64_prefixes`]), before any row.
/// ISATAP interface ids (RFC 5214) are refused outright, whatever the prefix: the packets go
/// to the embedded IPv4 address through a tunnel router. 6to4 `2002::/16` and Teredo
/// (`2001::/32`, in `2001::/23`) are refused outright, whatever they embed: both are
/// deprecated relay mechanisms (RFC 7526, RFC 4380), the packets go through relays to
/// addresses the sender cannot check (Teredo's client address is obfuscated and behind a NAT),
/// and no receiver needs them. Local-use NAT64 `64:ff9b:1::/48` is refused: its embedding is
/// a local choice of prefix length, so the embedded address cannot be read reliably.
#[rustfmt::skip]
const V6_RANGES: &[(Ipv6Addr, u8, V6, &str)] = &[
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 1), 128, V6::Loopback, "loopback, RFC 4291"),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 128, V6::NonPublic, "unspecified, RFC 4291"),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96, V6::Mapped, "IPv4-mapped, RFC 4291"),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96, V6::Embedded, "IPv4-compatible (deprecated), RFC 4291"),
    (Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96, V6::Embedded, "NAT64 well-known prefix, RFC 6052"),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, V6::NonPublic, "local-use NAT64, RFC 8215"),
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, V6::NonPublic, "discard-only, RFC 6666"),
    (Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0), 64, V6::NonPublic, "dummy prefix, RFC 9780"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, V6::NonPublic, "IETF protocol assignments (Teredo, benchmarking 2001:2::/48, AMT, AS112, ORCHID 2001:10::/28, ORCHIDv2 2001:20::/28, drone DET), RFC 2928"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, V6::NonPublic, "documentation, RFC 3849"),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, V6::NonPublic, "6to4 (deprecated), RFC 3056, RFC 7526"),
    (Ipv6Addr::new(0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0), 48, V6::NonPublic, "AS112 direct delegation, RFC 7534"),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, V6::NonPublic, "documentation, RFC 9637"),
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16, V6::NonPublic, "SRv6 SIDs, RFC 9602"),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, V6::NonPublic, "unique local, RFC 4193"),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, V6::NonPublic, "link-local, RFC 4291"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, V6::NonPublic, "site-local (deprecated), RFC 3879"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, V6::NonPublic, "multicast, RFC 4291"),
];

/// Global unicast `2000::/3` (RFC 4291): the only IPv6 space outside [`V6_RANGES`] that is
/// public; the rest is reserved by the IETF.
const V6_GLOBAL_UNICAST: (Ipv6Addr, u8) = (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);

fn in_v4(ip: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(net)
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net)
}

fn classify(ip: IpAddr, nat64: &Nat64Prefixes) -> Class {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6, nat64),
    }
}

/// A translator's destination: public when the embedded address is, never loopback (a
/// translator does not reach this host).
fn translated(v4: Ipv4Addr) -> Class {
    match classify_v4(v4) {
        Class::Public => Class::Public,
        Class::Loopback | Class::NonPublic => Class::NonPublic,
    }
}

fn classify_v4(ip: Ipv4Addr) -> Class {
    match V4_RANGES
        .iter()
        .find(|(net, len, ..)| in_v4(ip, *net, *len))
    {
        None => Class::Public,
        Some((_, _, V4::Loopback, _)) => Class::Loopback,
        Some((_, _, V4::NonPublic, _)) => Class::NonPublic,
    }
}

fn classify_v6(ip: Ipv6Addr, nat64: &Nat64Prefixes) -> Class {
    let embedded = || {
        let [.., a, b, c, d] = ip.octets();
        Ipv4Addr::new(a, b, c, d)
    };
    if let Some(prefix) = nat64.holding(ip) {
        return prefix.embedded(ip).map_or(Class::NonPublic, translated);
    }
    if is_isatap(ip) {
        return Class::NonPublic;
    }
    match V6_RANGES
        .iter()
        .find(|(net, len, ..)| in_v6(ip, *net, *len))
    {
        Some((_, _, V6::Loopback, _)) => Class::Loopback,
        Some((_, _, V6::NonPublic, _)) => Class::NonPublic,
        Some((_, _, V6::Mapped, _)) => classify_v4(embedded()),
        Some((_, _, V6::Embedded, _)) => translated(embedded()),
        None if in_v6(ip, V6_GLOBAL_UNICAST.0, V6_GLOBAL_UNICAST.1) => Class::Public,
        None => Class::NonPublic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: UrlPolicy = UrlPolicy::STRICT;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn only_https_to_public_hosts_by_default() {
        assert_eq!(UrlPolicy::default(), STRICT);
        assert!(check_url("https://shop.example.com/hooks?x=1", STRICT).is_ok());
        assert!(check_url("https://93.184.216.34/h", STRICT).is_ok());
        assert!(check_url("https://[2606:2800:220:1:248:1893:25c8:1946]/h", STRICT).is_ok());
        assert_eq!(
            check_url("http://shop.example.com/h", STRICT),
            Err(UrlProblem::NotHttps)
        );
        for bad in [
            "",
            "shop.example.com",
            "ftp://shop.example.com",
            "https://user:pw@shop.example.com/",
            "https:///nohost",
            " https://shop.example.com",
        ] {
            assert_eq!(check_url(bad, STRICT), Err(UrlProblem::Invalid), "{bad:?}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL));
        assert_eq!(check_url(&long, STRICT), Err(UrlProblem::Invalid));
    }

    /// Every special-purpose range of both IANA registries, the IPv6 forms that embed IPv4,
    /// and the deprecated ones: refused by the strict policy and by the sandbox's (none is
    /// loopback), as a literal host and when a name resolves to them (`check_address`).
    #[test]
    fn every_special_purpose_form_is_refused() {
        let refused = [
            // IPv4 (IANA IPv4 Special-Purpose Address Registry, multicast, reserved).
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.1",
            "192.0.0.9",
            "192.0.0.170",
            "192.0.2.1",
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.168.1.1",
            "192.175.48.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            // IPv6 (IANA IPv6 Special-Purpose Address Registry and deprecated forms).
            "::",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:0.0.0.0",
            "::10.0.0.1",
            "::169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::169.254.169.254",
            "64:ff9b::127.0.0.1",
            "64:ff9b:1::8.8.8.8",
            "64:ff9b:1:ffff::1",
            "100::1",
            "100:0:0:1::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
            "2001:1::1",
            "2001:2::1",
            "2001:3::1",
            "2001:4:112::1",
            "2001:10::1",
            "2001:20::1",
            "2001:30::1",
            "2001:1ff::1",
            "2001:db8::1",
            "2001:db8:ffff::1",
            "2002:a00:1::1",   // 6to4 of 10.0.0.1
            "2002:808:808::1", // 6to4 of 8.8.8.8: refused outright too
            "2620:4f:8000::1",
            "3fff::1",
            "3fff:fff:ffff::1",
            "5f00::1",
            "fc00::1",
            "fd00::1",
            "fdff:ffff::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "feff::1",
            "ff02::1",
            "ff0e::1",
            // Outside global unicast 2000::/3: reserved by the IETF.
            "1::1",
            "4000::1",
            "8000::1",
        ];
        for text in refused {
            let address = ip(text);
            for policy in [STRICT, UrlPolicy::SANDBOX] {
                assert_eq!(
                    check_address(address, policy),
                    Err(UrlProblem::NotPublic),
                    "{text} under {policy:?}"
                );
            }
            let literal = match address {
                IpAddr::V4(v4) => format!("https://{v4}/h"),
                IpAddr::V6(v6) => format!("https://[{v6}]/h"),
            };
            assert_eq!(
                check_url(&literal, STRICT),
                Err(UrlProblem::NotPublic),
                "{literal}"
            );
        }
    }

    #[test]
    fn public_addresses_and_public_embedded_ones_are_allowed() {
        for text in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
            "2001:200::1",
        ] {
            assert_eq!(check_address(ip(text), STRICT), Ok(()), "{text}");
        }
    }

    /// A network-specific NAT64 prefix the platform names is judged by the IPv4 address each
    /// of its addresses embeds (RFC 6052), also inside unique-local space; unnamed, it is plain
    /// IPv6. ISATAP interface ids are refused whatever their prefix.
    #[test]
    fn named_nat64_prefixes_are_judged_by_their_embedded_address_and_isatap_is_refused() {
        use crate::webhooks::{Nat64Prefix, Nat64Prefixes};
        let named = Nat64Prefixes::NONE
            .with(Nat64Prefix::parse("2a00:1450:64::/96").expect("a prefix"))
            .and_then(|p| p.with(Nat64Prefix::parse("fd00:64::/48").expect("a prefix")))
            .expect("room");
        let policy = STRICT.with_nat64_prefixes(named);
        for text in [
            "2a00:1450:64::10.0.0.1",
            "2a00:1450:64::169.254.169.254",
            "2a00:1450:64::127.0.0.1",
            "fd00:64:0:a00:0:100::", // 10.0.0.1 in the /48
        ] {
            let sandbox = UrlPolicy::SANDBOX.with_nat64_prefixes(named);
            for policy in [policy, sandbox] {
                assert_eq!(
                    check_address(ip(text), policy),
                    Err(UrlProblem::NotPublic),
                    "{text}"
                );
            }
        }
        assert_eq!(check_address(ip("2a00:1450:64::8.8.8.8"), policy), Ok(()));
        assert_eq!(check_address(ip("fd00:64:0:808:8:800::"), policy), Ok(()));
        // The "u" octet of a /48's address is not zero: no address is embedded.
        assert_eq!(
            check_address(ip("fd00:64:0:808:ff08:800::"), policy),
            Err(UrlProblem::NotPublic)
        );
        // Unnamed, the global prefix is global unicast.
        assert_eq!(check_address(ip("2a00:1450:64::10.0.0.1"), STRICT), Ok(()));

        for isatap in [
            "2a00:1450:4001::5efe:10.0.0.1",
            "2a00:1450:4001::5efe:8.8.8.8",
            "2a00:1450:4001:1:200:5efe:169.254.169.254",
            "2a00:1450:4001:1:300:5efe:8.8.8.8",
        ] {
            assert_eq!(
                check_address(ip(isatap), STRICT),
                Err(UrlProblem::NotPublic),
                "{isatap}"
            );
            assert_eq!(
                check_url(&format!("https://[{isatap}]/h"), policy),
                Err(UrlProblem::NotPublic),
                "{isatap}"
            );
        }
    }

    /// URL parsers read IPv4 addresses written in decimal, octal, hex and short forms (the
    /// WHATWG host parser, which the `url` crate follows): each is judged as the address it
    /// is, never as a host name.
    #[test]
    fn numeric_ipv4_forms_are_read_as_the_address_they_are() {
        for (text, address) in [
            ("http://2130706433/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://017700000001/", "127.0.0.1"),
            ("http://10.1/", "10.0.0.1"),
            ("http://167772161/", "10.0.0.1"),
            ("http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"),
            ("http://2852039166/", "169.254.169.254"),
            ("http://0/", "0.0.0.0"),
            ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
            ("http://[::ffff:a9fe:a9fe]/", "::ffff:169.254.169.254"),
        ] {
            let parsed = Url::parse(text).expect("a URL");
            let host = match parsed.host() {
                Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
                Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
                other => panic!("{text} parsed to {other:?}"),
            };
            assert_eq!(host, ip(address), "{text}");
            let https = text.replacen("http:", "https:", 1);
            assert_eq!(
                check_url(&https, STRICT),
                Err(UrlProblem::NotPublic),
                "{https}"
            );
        }
        // The sandbox allows loopback, in any spelling, and nothing else private.
        assert!(check_url("http://2130706433:9000/h", UrlPolicy::SANDBOX).is_ok());
        assert!(check_url("http://0x7f.1/h", UrlPolicy::SANDBOX).is_ok());
        assert_eq!(
            check_url("http://167772161/h", UrlPolicy::SANDBOX),
            Err(UrlProblem::NotPublic)
        );
    }

    #[test]
    fn the_sandbox_allows_http_and_loopback_only() {
        let sandbox = UrlPolicy::SANDBOX;
        for allowed in [
            "http://127.0.0.1:9000/hooks",
            "http://127.255.255.254/h",
            "http://[::1]:9000/h",
            "http://[::ffff:127.0.0.1]/h",
            "https://93.184.216.34/h",
        ] {
            assert!(check_url(allowed, sandbox).is_ok(), "{allowed}");
        }
        for refused in [
            "http://10.0.0.1/h",
            "http://169.254.169.254/latest/meta-data",
            "http://192.168.0.1/h",
            "http://[fd00::1]/h",
            "http://[fe80::1]/h",
            "http://[::127.0.0.1]/h",
            "http://[64:ff9b::127.0.0.1]/h",
            "http://0.0.0.0/h",
            "http://[::]/h",
        ] {
            assert_eq!(
                check_url(refused, sandbox),
                Err(UrlProblem::NotPublic),
                "{refused}"
            );
        }
        let any = UrlPolicy {
            allow_http: true,
            addresses: Addresses::Any,
            ..UrlPolicy::STRICT
        };
        assert!(check_url("http://10.0.0.1/h", any).is_ok());
    }

    /// The tables are well formed: each row's address is the first of its range (no host
    /// bits set), so no row silently covers less than it says.
    #[test]
    fn every_range_row_is_a_network_address() {
        for (net, len, _, what) in V4_RANGES {
            assert!(in_v4(*net, *net, *len) && *len <= 32, "{net}/{len} {what}");
            let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
            assert_eq!(u32::from(*net) & !mask, 0, "{net}/{len} {what}");
        }
        for (net, len, _, what) in V6_RANGES {
            let mask = u128::MAX.checked_shl(128 - u32::from(*len)).unwrap_or(0);
            assert!(*len <= 128, "{net}/{len} {what}");
            assert_eq!(u128::from(*net) & !mask, 0, "{net}/{len} {what}");
        }
    }
}
