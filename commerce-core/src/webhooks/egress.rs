//! How the dispatcher reaches receivers: its HTTP client, which ignores the proxy
//! environment variables, resolves host names through [`CheckedResolver`] (the address rules
//! again, at connection time) and goes through the platform's [`EgressProxy`] when one is set.

use std::net::SocketAddr;
use std::sync::Arc;

use super::urls::{UrlPolicy, UrlProblem};
use super::{DispatcherConfig, Dns};

/// The dispatcher's HTTP client: no system proxy (through a proxy taken from `HTTP_PROXY`,
/// `HTTPS_PROXY` or `ALL_PROXY` the checking resolver would never see the target), no
/// redirects, the attempt timeout, host names resolved by [`CheckedResolver`], and the
/// platform's proxy if it named one.
pub(super) fn client(policy: UrlPolicy, config: &DispatcherConfig) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(config.timeout)
        .user_agent(concat!("commerce-webhooks/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(CheckedResolver {
            policy,
            proxy_host: config.proxy.as_ref().and_then(EgressProxy::host_name),
            dns: Dns::system(config.timeout),
        }));
    if let Some(proxy) = &config.proxy {
        builder = builder.proxy(
            reqwest::Proxy::all(proxy.0.clone())
                .expect("an http or https proxy URL, checked by EgressProxy::new"),
        );
    }
    builder
        .build()
        .expect("a reqwest client with rustls, no redirects and no system proxy builds")
}

/// An egress proxy for webhook attempts, named by the platform (never taken from the
/// environment): `http://host:port` or `https://host:port`, credentials allowed in the URL.
///
/// Through a proxy the dispatcher no longer sees where a host name leads (the proxy resolves
/// it), so **the proxy must enforce the address rules itself**: refuse loopback, private,
/// link-local and every other non-public destination, after its own resolution. The
/// dispatcher still refuses URLs whose host is a non-public address literal, and the proxy's
/// own host is reached whatever its address (it is usually a private one).
#[derive(Clone, PartialEq, Eq)]
pub struct EgressProxy(url::Url);

impl EgressProxy {
    /// The proxy at `url`: `http` or `https`, with a host, no path, query or fragment.
    pub fn new(url: &str) -> Result<Self, UrlProblem> {
        let parsed = url::Url::parse(url).map_err(|_| UrlProblem::Invalid)?;
        let plain = matches!(parsed.path(), "" | "/")
            && parsed.query().is_none()
            && parsed.fragment().is_none();
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() || !plain {
            return Err(UrlProblem::Invalid);
        }
        Ok(Self(parsed))
    }

    /// Its host name (not an address literal): the one name the dispatcher resolves without
    /// the address rules.
    fn host_name(&self) -> Option<String> {
        match self.0.host() {
            Some(url::Host::Domain(name)) => Some(name.to_owned()),
            _ => None,
        }
    }
}

/// In settings, the proxy's URL (checked as [`EgressProxy::new`] checks it).
impl<'de> serde::Deserialize<'de> for EgressProxy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let url = String::deserialize(deserializer)?;
        Self::new(&url).map_err(|_| {
            serde::de::Error::custom("an egress proxy is an http or https URL with a host only")
        })
    }
}

/// Scheme, host and port only: never the credentials.
impl std::fmt::Debug for EgressProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = self.0.host_str().unwrap_or_default();
        match self.0.port_or_known_default() {
            Some(port) => write!(f, "EgressProxy({}://{host}:{port})", self.0.scheme()),
            None => write!(f, "EgressProxy({}://{host})", self.0.scheme()),
        }
    }
}

/// Resolves host names for the HTTP client, keeping only addresses the policy allows: a
/// name checked at registration may resolve elsewhere later, so it is checked again here,
/// where the connection is made. The one exception is the platform's egress proxy
/// ([`DispatcherConfig::proxy`](super::DispatcherConfig::proxy)), which enforces the rules itself.
/// Names are looked up by [`Dns`] (async, within the attempt's timeout), never on a thread of
/// the blocking pool.
struct CheckedResolver {
    policy: UrlPolicy,
    /// The egress proxy's host name, resolved as it is.
    proxy_host: Option<String>,
    dns: Dns,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy;
        let host = name.as_str().to_owned();
        let is_proxy = self.proxy_host.as_deref() == Some(host.as_str());
        let dns = self.dns.clone();
        Box::pin(async move {
            let allowed: Vec<SocketAddr> = dns
                .lookup(&host)
                .await?
                .into_iter()
                .filter(|ip| is_proxy || policy.allows(*ip))
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if allowed.is_empty() {
                return Err("the host resolves to no allowed address".into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use reqwest::dns::{Name, Resolve};

    use super::*;

    async fn resolve(resolver: CheckedResolver, name: &str) -> Option<Vec<SocketAddr>> {
        let name = Name::from_str(name).expect("a name");
        resolver
            .resolve(name)
            .await
            .ok()
            .map(|found| found.collect())
    }

    /// `localhost` is loopback: refused by the strict policy, allowed by the sandbox's; the
    /// platform's proxy is resolved whatever its address.
    #[tokio::test]
    async fn the_resolver_keeps_only_allowed_addresses_except_for_the_proxy() {
        let dns = Dns::system(std::time::Duration::from_secs(2));
        let strict = CheckedResolver {
            policy: UrlPolicy::STRICT,
            proxy_host: None,
            dns: dns.clone(),
        };
        assert_eq!(resolve(strict, "localhost").await, None);
        let sandbox = CheckedResolver {
            policy: UrlPolicy::SANDBOX,
            proxy_host: None,
            dns: dns.clone(),
        };
        let found = resolve(sandbox, "localhost")
            .await
            .expect("loopback allowed");
        assert!(!found.is_empty() && found.iter().all(|a| a.ip().is_loopback()));
        let proxy = EgressProxy::new("http://localhost:3128").expect("a proxy URL");
        let through_proxy = CheckedResolver {
            policy: UrlPolicy::STRICT,
            proxy_host: proxy.host_name(),
            dns,
        };
        assert!(resolve(through_proxy, "localhost").await.is_some());
    }

    #[test]
    fn an_egress_proxy_is_an_http_url_and_never_shows_its_credentials() {
        for good in [
            "http://proxy.internal:3128",
            "https://proxy.internal/",
            "http://10.0.0.5:8080",
        ] {
            assert!(EgressProxy::new(good).is_ok(), "{good}");
        }
        for bad in [
            "socks5://proxy.internal:1080",
            "ftp://proxy.internal",
            "http://proxy.internal/path",
            "http://proxy.internal/?q=1",
            "proxy.internal:3128",
            "",
        ] {
            assert_eq!(EgressProxy::new(bad), Err(UrlProblem::Invalid), "{bad}");
        }
        let with_password = EgressProxy::new("http://user:hunter2@proxy.internal:3128")
            .expect("credentials are allowed");
        let shown = format!("{with_password:?}");
        assert_eq!(shown, "EgressProxy(http://proxy.internal:3128)");
        let config = DispatcherConfig::default().with_proxy(with_password);
        assert!(!format!("{config:?}").contains("hunter2"));
        // A client with a proxy builds (the URL was checked).
        let _ = client(UrlPolicy::STRICT, &config);
    }
}
