//! NAT64 prefixes (RFC 6052) and ISATAP interface ids, for the address rules of
//! [`urls`](super::urls).
//!
//! An address inside a NAT64 prefix is not the destination: the translator connects to the
//! IPv4 address it embeds. So such an address is judged by that IPv4 address: the well-known
//! prefix `64:ff9b::/96` always, and the network-specific prefixes a platform's network uses
//! when it names them ([`UrlPolicy::nat64_prefixes`](super::UrlPolicy::nat64_prefixes)):
//! otherwise an address of such a prefix is plain global (or unique-local) IPv6, and
//! `2001:db8:64::10.0.0.1` would reach `10.0.0.1` through the translator.

use std::net::{Ipv4Addr, Ipv6Addr};

/// A NAT64 prefix of one of the lengths of RFC 6052 (32, 40, 48, 56, 64 or 96 bits), with no
/// bit set after its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nat64Prefix {
    net: Ipv6Addr,
    len: u8,
}

/// Why a NAT64 prefix is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Nat64PrefixError {
    /// Not `address/length`.
    #[error("not an IPv6 prefix (address/length)")]
    Syntax,
    /// A length RFC 6052 does not define (32, 40, 48, 56, 64 or 96).
    #[error("a NAT64 prefix is 32, 40, 48, 56, 64 or 96 bits long")]
    Length,
    /// Bits set after the prefix's length.
    #[error("the address has bits set after the prefix length")]
    HostBits,
    /// More prefixes than [`Nat64Prefixes::MAX`].
    #[error("at most {} NAT64 prefixes", Nat64Prefixes::MAX)]
    TooMany,
}

impl Nat64Prefix {
    /// The well-known prefix `64:ff9b::/96` (RFC 6052), judged by its embedded address under
    /// every policy without being named.
    pub const WELL_KNOWN: Nat64Prefix = Nat64Prefix {
        net: Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0),
        len: 96,
    };

    /// The prefix `net/len`.
    pub fn new(net: Ipv6Addr, len: u8) -> Result<Self, Nat64PrefixError> {
        if ![32, 40, 48, 56, 64, 96].contains(&len) {
            return Err(Nat64PrefixError::Length);
        }
        if u128::from(net) & !mask(len) != 0 {
            return Err(Nat64PrefixError::HostBits);
        }
        Ok(Self { net, len })
    }

    /// The prefix written `2001:db8:64::/96`.
    pub fn parse(text: &str) -> Result<Self, Nat64PrefixError> {
        let (net, len) = text
            .trim()
            .split_once('/')
            .ok_or(Nat64PrefixError::Syntax)?;
        let net: Ipv6Addr = net.parse().map_err(|_| Nat64PrefixError::Syntax)?;
        let len: u8 = len.parse().map_err(|_| Nat64PrefixError::Syntax)?;
        Self::new(net, len)
    }

    /// The prefix's first address.
    pub fn network(self) -> Ipv6Addr {
        self.net
    }

    /// The prefix's length, in bits.
    pub fn prefix_len(self) -> u8 {
        self.len
    }

    /// Whether `ip` is inside the prefix.
    pub fn contains(self, ip: Ipv6Addr) -> bool {
        u128::from(ip) & mask(self.len) == u128::from(self.net)
    }

    /// The IPv4 address `ip` embeds (as RFC 6052 places it: the 32 bits after the prefix,
    /// skipping bits 64 to 71), `None` when `ip` is outside the prefix or its bits 64 to 71
    /// (the "u" octet, zero by the RFC) are not zero.
    pub fn embedded(self, ip: Ipv6Addr) -> Option<Ipv4Addr> {
        if !self.contains(ip) {
            return None;
        }
        let o = ip.octets();
        if self.len < 96 && o[8] != 0 {
            return None;
        }
        let v4 = match self.len {
            32 => [o[4], o[5], o[6], o[7]],
            40 => [o[5], o[6], o[7], o[9]],
            48 => [o[6], o[7], o[9], o[10]],
            56 => [o[7], o[9], o[10], o[11]],
            64 => [o[9], o[10], o[11], o[12]],
            _ => [o[12], o[13], o[14], o[15]],
        };
        Some(Ipv4Addr::from(v4))
    }
}

impl std::fmt::Display for Nat64Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.net, self.len)
    }
}

/// Written `"2001:db8:64::/96"`, as [`Nat64Prefix::parse`] reads it.
impl<'de> serde::Deserialize<'de> for Nat64Prefix {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text)
            .map_err(|error| serde::de::Error::custom(format_args!("{text:?}: {error}")))
    }
}

fn mask(len: u8) -> u128 {
    u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0)
}

/// The network-specific NAT64 prefixes of a platform's network (none by default), at most
/// [`MAX`](Self::MAX): an address inside one is judged by the IPv4 address it embeds.
/// `Copy`, so that a [`UrlPolicy`](super::UrlPolicy) stays a plain value. In settings, a list
/// of prefixes: `["2001:db8:64::/96"]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Nat64Prefixes([Option<Nat64Prefix>; Nat64Prefixes::MAX]);

/// A list of [`Nat64Prefix`]es, at most [`Nat64Prefixes::MAX`].
impl<'de> serde::Deserialize<'de> for Nat64Prefixes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let listed = Vec::<Nat64Prefix>::deserialize(deserializer)?;
        listed
            .into_iter()
            .try_fold(Self::NONE, Self::with)
            .map_err(serde::de::Error::custom)
    }
}

impl Nat64Prefixes {
    /// The most prefixes a policy names (a network uses one or two).
    pub const MAX: usize = 4;

    /// No network-specific prefix (the well-known one is always judged).
    pub const NONE: Nat64Prefixes = Nat64Prefixes([None; Nat64Prefixes::MAX]);

    /// These prefixes and `prefix`; [`Nat64PrefixError::TooMany`] past [`MAX`](Self::MAX).
    pub fn with(mut self, prefix: Nat64Prefix) -> Result<Self, Nat64PrefixError> {
        if self.iter().any(|p| p == prefix) {
            return Ok(self);
        }
        let free = self
            .0
            .iter_mut()
            .find(|slot| slot.is_none())
            .ok_or(Nat64PrefixError::TooMany)?;
        *free = Some(prefix);
        Ok(self)
    }

    /// The prefixes named.
    pub fn iter(&self) -> impl Iterator<Item = Nat64Prefix> + '_ {
        self.0.iter().flatten().copied()
    }

    /// The named prefix that holds `ip`, the longest when several do.
    pub(crate) fn holding(&self, ip: Ipv6Addr) -> Option<Nat64Prefix> {
        self.iter().filter(|p| p.contains(ip)).max_by_key(|p| p.len)
    }
}

/// Whether `ip`'s interface id (its last 64 bits) is an ISATAP one (RFC 5214):
/// `0:5efe:a.b.c.d` or `200:5efe:a.b.c.d` (the "u" bit set for a global IPv4 address; the
/// "g" bit set too, `100:5efe` and `300:5efe`). The packets go to the IPv4 address through a
/// tunnel router the sender cannot check, and no receiver needs them: refused outright.
pub(crate) fn is_isatap(ip: Ipv6Addr) -> bool {
    let id = u128::from(ip) as u64;
    (id >> 32) as u32 & 0xfcff_ffff == 0x0000_5efe
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(text: &str) -> Ipv6Addr {
        text.parse().expect("an IPv6 address")
    }

    /// The table of examples of RFC 6052: 192.0.2.33 in each prefix length.
    #[test]
    fn the_embedded_address_is_read_at_every_length_of_rfc_6052() {
        let v4 = Ipv4Addr::new(192, 0, 2, 33);
        for (prefix, address) in [
            ("2001:db8::/32", "2001:db8:c000:221::"),
            ("2001:db8:100::/40", "2001:db8:1c0:2:21::"),
            ("2001:db8:122::/48", "2001:db8:122:c000:2:2100::"),
            ("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"),
            ("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"),
            ("2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33"),
        ] {
            let prefix = Nat64Prefix::parse(prefix).expect(prefix);
            assert_eq!(prefix.embedded(v6(address)), Some(v4), "{prefix}");
        }
        assert_eq!(
            Nat64Prefix::WELL_KNOWN.embedded(v6("64:ff9b::192.0.2.33")),
            Some(v4)
        );
        // The "u" octet must be zero.
        let p64 = Nat64Prefix::parse("2001:db8:122:344::/64").expect("a prefix");
        assert_eq!(p64.embedded(v6("2001:db8:122:344:1c0:2:2100:0")), None);
        assert_eq!(p64.embedded(v6("2001:db8:122:345::")), None, "outside");
    }

    #[test]
    fn a_prefix_has_a_length_of_the_rfc_and_no_host_bits() {
        assert_eq!(
            Nat64Prefix::parse("2001:db8::/33"),
            Err(Nat64PrefixError::Length)
        );
        assert_eq!(
            Nat64Prefix::parse("2001:db8::1/96"),
            Err(Nat64PrefixError::HostBits)
        );
        assert_eq!(
            Nat64Prefix::parse("2001:db8::"),
            Err(Nat64PrefixError::Syntax)
        );
        assert_eq!(
            Nat64Prefix::parse("10.0.0.0/8"),
            Err(Nat64PrefixError::Syntax)
        );
        let mut prefixes = Nat64Prefixes::NONE;
        for i in 0..Nat64Prefixes::MAX {
            let net = Ipv6Addr::new(0x2001, 0xdb8, i as u16, 0, 0, 0, 0, 0);
            prefixes = prefixes
                .with(Nat64Prefix::new(net, 96).expect("a prefix"))
                .expect("room");
        }
        let again = prefixes.iter().next().expect("one");
        assert_eq!(prefixes.with(again), Ok(prefixes), "a repeat takes no room");
        let one_more = Nat64Prefix::parse("2001:db8:ff::/96").expect("a prefix");
        assert_eq!(prefixes.with(one_more), Err(Nat64PrefixError::TooMany));
    }

    #[test]
    fn isatap_interface_ids_are_recognised() {
        for isatap in [
            "2001:db8::5efe:10.0.0.1",
            "2001:db8::200:5efe:8.8.8.8",
            "2001:db8::100:5efe:8.8.8.8",
            "fe80::5efe:192.168.0.1",
        ] {
            assert!(is_isatap(v6(isatap)), "{isatap}");
        }
        for other in [
            "2001:db8::1",
            "2001:db8::400:5efe:8.8.8.8",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_isatap(v6(other)), "{other}");
        }
    }
}
