//! Which hosts a run's outbound calls may reach (docs/run.md, Outbound calls).
//!
//! Request text chooses URLs, so every call resolves its host first and judges the
//! addresses, not the name: a name that resolves to a loopback or private address is
//! refused like the address itself. The addresses judged are the ones the connection
//! uses (see [`Destinations::resolve`]), so a name that answers differently the second
//! time cannot slip past. `[run] allow_hosts` opens named hosts or ranges; the
//! server's own listening address stays closed whatever it says, so a run cannot call
//! the API that started it.

use std::net::{IpAddr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::ranges::{in_net, refused_range};

/// Why a destination is not reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DestinationError {
    #[error(
        "`{entry}` in `[run] allow_hosts` is neither a hostname, an IP address nor a CIDR range like 10.0.0.0/8 (docs/run.md, Outbound calls)"
    )]
    BadAllow { entry: String },
    #[error(
        "`{host}` is {addr}, in {range}, which runs do not reach; to allow it, list \"{host}\" (or the address, or a CIDR range holding it) in `allow_hosts` under `[run]` in waypoint.toml (docs/run.md, Outbound calls)"
    )]
    Refused {
        host: String,
        addr: IpAddr,
        range: String,
    },
    #[error(
        "`{host}` is {addr}, where this server itself listens; runs never call the server that runs them, whatever `allow_hosts` says"
    )]
    OwnAddress { host: String, addr: SocketAddr },
    #[error("`{host}` does not resolve: {message}")]
    Unresolved { host: String, message: String },
    #[error("`{url}` names no host")]
    NoHost { url: String },
}

/// One `allow_hosts` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Allow {
    /// A hostname, lower-case without a trailing dot: reached whatever it resolves to.
    Host(String),
    /// An address or a CIDR range: reached under any name.
    Net { addr: IpAddr, prefix: u8 },
}

impl Allow {
    fn parse(entry: &str) -> Result<Self, DestinationError> {
        let bad = || DestinationError::BadAllow {
            entry: entry.to_string(),
        };
        let text = entry.trim();
        let bare = text.replace(['[', ']'], "");
        if let Some((addr, prefix)) = bare.split_once('/') {
            let addr: IpAddr = addr.parse().map_err(|_| bad())?;
            let prefix: u8 = prefix.parse().map_err(|_| bad())?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            if prefix > max {
                return Err(bad());
            }
            return Ok(Self::Net { addr, prefix });
        }
        if let Ok(addr) = bare.parse::<IpAddr>() {
            let prefix = if addr.is_ipv4() { 32 } else { 128 };
            return Ok(Self::Net { addr, prefix });
        }
        // A name must be one the URL parser would keep as a name: no numeric forms
        // (`2130706433`, `127.1`), which it reads as addresses.
        let host = text.trim_end_matches('.').to_ascii_lowercase();
        let numeric = host.split('.').next_back().is_some_and(|l| {
            let hex = l.strip_prefix("0x").unwrap_or(l);
            (l.len() > hex.len() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                || l.bytes().all(|b| b.is_ascii_digit())
        });
        let valid = !host.is_empty()
            && !numeric
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
        if valid {
            Ok(Self::Host(host))
        } else {
            Err(bad())
        }
    }
}

/// The destination policy of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destinations {
    allow: Vec<Allow>,
    /// Refused even when allowed: the listening addresses of the server running us.
    own: Vec<SocketAddr>,
}

impl Destinations {
    /// The default policy plus `allow_hosts` entries (hostnames, IPs, CIDR ranges).
    pub fn allowing<S: AsRef<str>>(
        entries: impl IntoIterator<Item = S>,
    ) -> Result<Self, DestinationError> {
        let allow = entries
            .into_iter()
            .map(|e| Allow::parse(e.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            allow,
            own: Vec::new(),
        })
    }

    /// Also refuses these socket addresses, whatever `allow_hosts` says. An unspecified
    /// address (`0.0.0.0:8080`) stands for every loopback and unspecified address on
    /// that port.
    #[must_use]
    pub fn refusing_always(mut self, addrs: impl IntoIterator<Item = SocketAddr>) -> Self {
        self.own.extend(addrs);
        self
    }

    /// Judges one address `host` resolved to.
    pub fn check(&self, host: &str, addr: SocketAddr) -> Result<(), DestinationError> {
        let ip = addr.ip().to_canonical();
        let own = self.own.iter().any(|o| {
            let o_ip = o.ip().to_canonical();
            o.port() == addr.port()
                && (o_ip == ip
                    || (o_ip.is_unspecified() && (ip.is_loopback() || ip.is_unspecified())))
        });
        if own {
            return Err(DestinationError::OwnAddress {
                host: host.to_string(),
                addr,
            });
        }
        let Some(range) = refused_range(addr.ip()) else {
            return Ok(());
        };
        let name = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let allowed = self.allow.iter().any(|a| match a {
            Allow::Host(h) => *h == name,
            Allow::Net { addr: net, prefix } => in_net(addr.ip(), *net, *prefix),
        });
        if allowed {
            Ok(())
        } else {
            Err(DestinationError::Refused {
                host: host.to_string(),
                addr: addr.ip(),
                range,
            })
        }
    }

    /// The addresses a URL's host resolves to, every one of them checked; a host with
    /// any refused address is refused. Connect only to what this returns (see
    /// [`Destinations::pinned_client`]).
    pub async fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>, DestinationError> {
        let no_host = || DestinationError::NoHost {
            url: url.to_string(),
        };
        let host = url.host_str().ok_or_else(no_host)?;
        let port = url.port_or_known_default().ok_or_else(no_host)?;
        let addrs: Vec<SocketAddr> = match url.host().ok_or_else(no_host)? {
            url::Host::Ipv4(ip) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
            url::Host::Ipv6(ip) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
            url::Host::Domain(name) => tokio::net::lookup_host((name, port))
                .await
                .map_err(|e| DestinationError::Unresolved {
                    host: host.to_string(),
                    message: e.to_string(),
                })?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(DestinationError::Unresolved {
                host: host.to_string(),
                message: "no addresses".into(),
            });
        }
        for addr in &addrs {
            self.check(host, *addr)?;
        }
        Ok(addrs)
    }

    /// An HTTP client that connects `url`'s host only to `addrs` (from
    /// [`Destinations::resolve`]): no second lookup, no proxy, no redirects followed on
    /// its own (each hop is judged again by its caller), and any other name refused.
    pub fn pinned_client(
        url: &Url,
        addrs: &[SocketAddr],
    ) -> Result<reqwest::Client, reqwest::Error> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .user_agent(concat!("waypoint/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(RefuseLookups);
        if let Some(url::Host::Domain(name)) = url.host() {
            builder = builder.resolve_to_addrs(name, addrs);
        }
        builder.build()
    }
}

/// The resolver behind a pinned client: every name it may reach was given its
/// addresses up front, so any lookup that still happens is refused.
struct RefuseLookups;

impl Resolve for RefuseLookups {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            Err::<Addrs, _>(
                format!("`{host}` was not checked against the destination policy").into(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn allow_entries_parse_names_addresses_and_ranges() {
        let d = Destinations::allowing(["Intranet.Example.", "10.0.0.0/8", "::1", "[fd00::]/8"])
            .unwrap();
        assert!(d.check("intranet.example", sock("192.168.1.1:80")).is_ok());
        assert!(d.check("a.example", sock("10.9.9.9:80")).is_ok());
        assert!(d.check("[::1]", sock("[::1]:80")).is_ok());
        assert!(d.check("x", sock("[fd12::1]:80")).is_ok());
        assert!(d.check("x", sock("192.168.1.1:80")).is_err());
        for bad in ["10.0.0.0/33", "2130706433", "127.1", "a b", "", "0x7f.1"] {
            assert!(Destinations::allowing([bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_own_address_is_refused_even_when_allowed() {
        let d = Destinations::allowing(["127.0.0.0/8"])
            .unwrap()
            .refusing_always([sock("0.0.0.0:8080")]);
        let e = d.check("localhost", sock("127.0.0.1:8080")).unwrap_err();
        assert!(matches!(e, DestinationError::OwnAddress { .. }), "{e}");
        assert!(d.check("localhost", sock("127.0.0.1:8081")).is_ok());
    }
}
