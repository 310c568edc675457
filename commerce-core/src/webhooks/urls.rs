//! Where events may be sent: `https` URLs of public hosts, unless the platform allows more.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Longest webhook URL, in characters.
pub const MAX_URL: usize = 2048;

/// What the platform allows besides `https` URLs of public addresses (both off by default;
/// the sandbox and tests allow both, to reach a receiver on `http://127.0.0.1`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// Plain `http` URLs.
    pub allow_http: bool,
    /// Hosts on loopback, private, link-local or otherwise non-public addresses.
    pub allow_private: bool,
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
    /// The host is, or resolves to, a non-public address.
    #[error("the host is not a public address")]
    NotPublic,
    /// The host name does not resolve.
    #[error("the host name does not resolve")]
    Unresolvable,
}

/// Checks a URL's form: absolute `https` (or `http` where allowed), a host, no credentials,
/// at most [`MAX_URL`] characters, and, when the host is an address, a public one. Host
/// names are checked when resolved ([`check_address`] on each address, at registration and
/// again when connecting).
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
        Some(Host::Domain(name)) if name.is_empty() => return Err(UrlProblem::Invalid),
        Some(Host::Domain(_)) => None,
        Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
    };
    if let Some(ip) = literal {
        check_address(ip, policy)?;
    }
    Ok(url)
}

/// Refuses a non-public address unless the policy allows them: loopback, private, shared
/// (CGNAT), link-local, unspecified, broadcast, documentation, benchmarking, reserved,
/// multicast, IPv6 unique-local, and IPv4-mapped forms of those.
pub fn check_address(ip: IpAddr, policy: UrlPolicy) -> Result<(), UrlProblem> {
    if policy.allow_private || is_public(ip) {
        Ok(())
    } else {
        Err(UrlProblem::NotPublic)
    }
}

fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)) // documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: UrlPolicy = UrlPolicy {
        allow_http: false,
        allow_private: false,
    };

    #[test]
    fn only_https_to_public_hosts_by_default() {
        assert!(check_url("https://shop.example.com/hooks?x=1", STRICT).is_ok());
        assert!(check_url("https://93.184.216.34/h", STRICT).is_ok());
        assert_eq!(
            check_url("http://shop.example.com/h", STRICT),
            Err(UrlProblem::NotHttps)
        );
        for private in [
            "https://127.0.0.1/h",
            "https://10.1.2.3/h",
            "https://192.168.1.1/h",
            "https://169.254.169.254/latest",
            "https://100.64.0.1/h",
            "https://0.0.0.0/h",
            "https://[::1]/h",
            "https://[fd00::1]/h",
            "https://[fe80::1]/h",
            "https://[::ffff:127.0.0.1]/h",
        ] {
            assert_eq!(
                check_url(private, STRICT),
                Err(UrlProblem::NotPublic),
                "{private}"
            );
        }
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

    #[test]
    fn the_platform_may_allow_http_and_loopback() {
        let open = UrlPolicy {
            allow_http: true,
            allow_private: true,
        };
        assert!(check_url("http://127.0.0.1:9000/hooks", open).is_ok());
    }
}
