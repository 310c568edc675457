//! Host names resolved for the webhook URL checks (registration, and the dispatcher's
//! connections): an async resolver (hickory-resolver), so a lookup is a future like any other.
//! When its timeout passes, the future is dropped and the lookup with it: a name whose server
//! never answers costs nothing after its timeout. The system's `getaddrinfo` (what
//! `tokio::net::lookup_host` calls) runs on a thread of the blocking pool that no timeout can
//! take back, so a burst of slow names would tie the pool up.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{LookupIpStrategy, NameServerConfigGroup, ResolverConfig};
use hickory_resolver::name_server::TokioConnectionProvider;

/// A resolver whose every lookup ends within its timeout.
#[derive(Clone)]
pub(crate) struct Dns {
    resolver: TokioResolver,
    timeout: Duration,
}

impl std::fmt::Debug for Dns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dns")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Dns {
    /// The system's configuration (`/etc/resolv.conf` and the hosts file on Unix, the
    /// registry on Windows); without one, what the C library falls back to: a name server on
    /// this machine (`127.0.0.1` and `::1`, port 53). Both address families are asked for, so
    /// that every address a name has is checked.
    pub(crate) fn system(timeout: Duration) -> Self {
        let builder = TokioResolver::builder_tokio().unwrap_or_else(|error| {
            tracing::warn!(%error, "no system DNS configuration: asking a name server on this machine");
            let local: [IpAddr; 2] = [Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()];
            let servers = NameServerConfigGroup::from_ips_clear(&local, 53, true);
            TokioResolver::builder_with_config(
                ResolverConfig::from_parts(None, Vec::new(), servers),
                TokioConnectionProvider::default(),
            )
        });
        Self::build(builder, timeout)
    }

    /// A resolver asking only these name servers, over UDP, without the hosts file (the
    /// tests' way in).
    #[cfg(test)]
    pub(crate) fn with_servers(servers: &[std::net::SocketAddr], timeout: Duration) -> Self {
        use hickory_resolver::config::NameServerConfig;
        use hickory_resolver::proto::xfer::Protocol;
        let servers: Vec<NameServerConfig> = servers
            .iter()
            .map(|server| NameServerConfig::new(*server, Protocol::Udp))
            .collect();
        let mut builder = TokioResolver::builder_with_config(
            ResolverConfig::from_parts(None, Vec::new(), servers),
            TokioConnectionProvider::default(),
        );
        builder.options_mut().use_hosts_file = hickory_resolver::config::ResolveHosts::Never;
        Self::build(builder, timeout)
    }

    fn build(
        mut builder: hickory_resolver::ResolverBuilder<TokioConnectionProvider>,
        timeout: Duration,
    ) -> Self {
        let options = builder.options_mut();
        options.timeout = timeout;
        options.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
        Self {
            resolver: builder.build(),
            timeout,
        }
    }

    /// The addresses of `host`, or an error when it does not resolve within the timeout (the
    /// lookup is then dropped, and every query of it with it).
    pub(crate) async fn lookup(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        match tokio::time::timeout(self.timeout, self.resolver.lookup_ip(host)).await {
            Ok(Ok(found)) => Ok(found.iter().collect()),
            Ok(Err(error)) => Err(io::Error::other(error)),
            Err(_elapsed) => Err(io::ErrorKind::TimedOut.into()),
        }
    }
}

/// Name servers for tests, on local UDP ports.
#[cfg(test)]
pub(crate) mod fake {
    use std::net::{IpAddr, SocketAddr};

    use hickory_resolver::proto::op::{Message, MessageType, OpCode};
    use hickory_resolver::proto::rr::rdata::{A, AAAA};
    use hickory_resolver::proto::rr::{RData, Record, RecordType};

    /// A name server that answers every name with `addresses` (the IPv4 ones to `A` queries,
    /// the IPv6 ones to `AAAA`), until the runtime ends.
    pub(crate) async fn answering(addresses: Vec<IpAddr>) -> SocketAddr {
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("a UDP socket");
        let address = socket.local_addr().expect("its address");
        tokio::spawn(async move {
            let mut buffer = [0u8; 512];
            while let Ok((length, peer)) = socket.recv_from(&mut buffer).await {
                let Ok(query) = Message::from_vec(&buffer[..length]) else {
                    continue;
                };
                let mut answer = Message::new();
                answer
                    .set_id(query.id())
                    .set_message_type(MessageType::Response)
                    .set_op_code(OpCode::Query)
                    .set_recursion_desired(true)
                    .set_recursion_available(true);
                for question in query.queries() {
                    answer.add_query(question.clone());
                    for ip in &addresses {
                        let data = match (ip, question.query_type()) {
                            (IpAddr::V4(v4), RecordType::A) => RData::A(A(*v4)),
                            (IpAddr::V6(v6), RecordType::AAAA) => RData::AAAA(AAAA(*v6)),
                            _ => continue,
                        };
                        answer.add_answer(Record::from_rdata(question.name().clone(), 60, data));
                    }
                }
                let bytes = answer.to_vec().expect("an answer encodes");
                let _ = socket.send_to(&bytes, peer).await;
            }
        });
        address
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every address of both families that the name server gives, parsed from its answers.
    #[tokio::test]
    async fn the_addresses_of_both_families_are_returned() {
        let given: Vec<IpAddr> = vec![
            "93.184.216.34".parse().expect("v4"),
            "10.0.0.7".parse().expect("v4"),
            "2606:2800:220:1::7".parse().expect("v6"),
        ];
        let server = fake::answering(given.clone()).await;
        let dns = Dns::with_servers(&[server], Duration::from_secs(2));
        let mut found = dns.lookup("hooks.example.com").await.expect("an answer");
        found.sort();
        let mut expected = given;
        expected.sort();
        assert_eq!(found, expected);
    }

    /// Loopback names come from the hosts file (or hickory's own `localhost`), with no name
    /// server asked: what the sandbox's receivers on `localhost` need.
    #[tokio::test]
    async fn localhost_is_loopback() {
        let found = Dns::system(Duration::from_secs(2))
            .lookup("localhost")
            .await
            .expect("localhost resolves");
        assert!(
            !found.is_empty() && found.iter().all(IpAddr::is_loopback),
            "{found:?}"
        );
    }
}
