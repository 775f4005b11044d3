//! The proxy, as curl reads it from the environment ([`Proxies::from_env`]), and the
//! connector that goes through it ([`Connector`]).
//!
//! - `http://` URLs go through `http_proxy` (or `HTTP_PROXY`), the request in absolute form;
//!   `https://` URLs through `https_proxy` (or `HTTPS_PROXY`) in a `CONNECT` tunnel, TLS with
//!   the destination inside it; `all_proxy` (or `ALL_PROXY`) when the scheme's own is unset.
//!   As curl, the lower-case form is read first, an empty value is unset, a proxy without a
//!   scheme is `http://`, and one without a port is on port 1080.
//! - `no_proxy` (or `NO_PROXY`): hosts reached directly, separated by commas: `*` (every
//!   host), a name (itself and its subdomains; a leading dot is the same), an IP address.
//! - The proxy's userinfo (`user:password@`) becomes `Proxy-Authorization: Basic`, sent to
//!   the proxy only (in the `CONNECT`, or with a plain-HTTP request); it is never shown: the
//!   proxy's URL is shown without it, and the transport redacts it from any text
//!   ([`Proxies::secrets`]).
//! - Only an `http://` proxy is spoken to (a TLS connection to the proxy itself, or SOCKS,
//!   is refused with the variable's name).

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::header::HeaderValue;
use http::Uri;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// curl's port of a proxy that names none.
const DEFAULT_PROXY_PORT: u16 = 1080;

/// One proxy: where it is, and its credentials.
#[derive(Clone)]
pub struct Proxy {
    /// `http://host:port/`, without userinfo: where to connect, and what may be shown.
    pub uri: Uri,
    /// `Basic base64(user:password)`, from the URL's userinfo.
    pub auth: Option<HeaderValue>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("uri", &self.uri)
            .field("auth", &self.auth.as_ref().map(|_| "***"))
            .finish()
    }
}

/// The proxies of the environment, and the hosts that bypass them.
#[derive(Clone, Default)]
pub struct Proxies {
    http: Option<Proxy>,
    https: Option<Proxy>,
    no_proxy: NoProxy,
    /// The proxies' userinfo (`user:password`, the password, and their decoded forms): never
    /// shown.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Proxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxies")
            .field("http", &self.http)
            .field("https", &self.https)
            .field("no_proxy", &self.no_proxy)
            .finish_non_exhaustive()
    }
}

impl Proxies {
    /// The proxies as curl reads them from the environment.
    pub fn from_env() -> Result<Self, String> {
        Self::from_vars(&|name| std::env::var(name).ok())
    }

    /// The proxies from `var` (a lookup of the environment).
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        // curl: the lower-case form first; an empty value is unset.
        let first = |names: [&'static str; 2]| {
            names
                .into_iter()
                .find_map(|n| var(n).filter(|v| !v.trim().is_empty()).map(|v| (n, v)))
        };
        let mut secrets = Vec::new();
        let mut parse = |found: Option<(&'static str, String)>| -> Result<Option<Proxy>, String> {
            found
                .map(|(name, value)| parse_proxy(name, &value, &mut secrets))
                .transpose()
        };
        let http = parse(first(["http_proxy", "HTTP_PROXY"]))?;
        let https = parse(first(["https_proxy", "HTTPS_PROXY"]))?;
        // `all_proxy` only where a scheme has none of its own (so a SOCKS `all_proxy` beside
        // both is not refused).
        let all = if http.is_none() || https.is_none() {
            parse(first(["all_proxy", "ALL_PROXY"]))?
        } else {
            None
        };
        let http = http.or_else(|| all.clone());
        let https = https.or(all);
        let no_proxy = first(["no_proxy", "NO_PROXY"])
            .map(|(_, v)| NoProxy::parse(&v))
            .unwrap_or_default();
        Ok(Proxies {
            http,
            https,
            no_proxy,
            secrets,
        })
    }

    /// The proxy for `dst`, or `None` when it is reached directly.
    pub fn for_uri(&self, dst: &Uri) -> Option<&Proxy> {
        let proxy = match dst.scheme_str()? {
            s if s.eq_ignore_ascii_case("http") => self.http.as_ref(),
            s if s.eq_ignore_ascii_case("https") => self.https.as_ref(),
            _ => None,
        }?;
        (!self.no_proxy.contains(dst.host()?)).then_some(proxy)
    }

    /// What of the proxies' URLs is never shown.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }
}

/// `value` of variable `name` as a proxy; its userinfo's parts are added to `secrets`.
fn parse_proxy(name: &str, value: &str, secrets: &mut Vec<String>) -> Result<Proxy, String> {
    let value = value.trim();
    let shown = nsys_gate_core::text::without_userinfo(value);
    let bad = |why: &str| format!("${name} (`{shown}`) {why}");
    let (scheme, rest) = match value.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_owned(), value),
    };
    if scheme != "http" {
        return Err(bad(&format!(
            "is a {scheme}:// proxy: nsys-gate speaks to an http:// proxy only (https:// URLs go through it in a CONNECT tunnel)"
        )));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let auth = match userinfo {
        Some(userinfo) => {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            let (user, raw_password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            let (user, password) = (decode(user), decode(raw_password));
            for s in [
                userinfo.to_owned(),
                raw_password.to_owned(),
                password.clone(),
                format!("{user}:{password}"),
            ] {
                if s.len() >= 4 && !secrets.contains(&s) {
                    secrets.push(s);
                }
            }
            // The header's credential too: a server that echoes headers may show it.
            let credential = base64(format!("{user}:{password}").as_bytes());
            secrets.push(credential.clone());
            let mut value = HeaderValue::from_str(&format!("Basic {credential}"))
                .map_err(|_| bad("has a user or password no header can carry"))?;
            value.set_sensitive(true);
            Some(value)
        }
        None => None,
    };
    let has_port = if host_port.starts_with('[') {
        host_port.contains("]:")
    } else {
        host_port.contains(':')
    };
    let host_port = if has_port {
        host_port.to_owned()
    } else {
        format!("{host_port}:{DEFAULT_PROXY_PORT}")
    };
    let uri: Uri = format!("http://{host_port}/")
        .parse()
        .map_err(|_| bad("is not a proxy URL"))?;
    if uri.host().is_none_or(str::is_empty) {
        return Err(bad("names no host"));
    }
    Ok(Proxy { uri, auth })
}

/// Standard base64 with padding (RFC 4648), for `Proxy-Authorization: Basic`.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `no_proxy`: hosts reached directly.
#[derive(Debug, Clone, Default)]
struct NoProxy {
    /// `*`: every host.
    all: bool,
    /// Lower-cased names without a leading dot: each matches itself and its subdomains.
    names: Vec<String>,
    /// Addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`; an address alone is its own
    /// range), as curl takes them: an IP host in one of them goes direct.
    nets: Vec<(IpAddr, u8)>,
}

impl NoProxy {
    fn parse(value: &str) -> Self {
        let mut no = NoProxy::default();
        for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                no.all = true;
            } else if let Some(net) = cidr(entry) {
                no.nets.push(net);
            } else {
                let name = entry.trim_start_matches('.').trim_end_matches('.');
                // curl: a port given with a name is not part of the match.
                let name = name.split(':').next().unwrap_or(name);
                no.names.push(name.to_ascii_lowercase());
            }
        }
        no
    }

    fn contains(&self, host: &str) -> bool {
        if self.all {
            return true;
        }
        let host = host.trim_matches(['[', ']']);
        if let Ok(ip) = host.parse::<IpAddr>() {
            return self.nets.iter().any(|net| within(ip, *net))
                || self.names.iter().any(|n| *n == host);
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.names.iter().any(|name| {
            host == *name
                || host
                    .strip_suffix(name.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        })
    }
}

/// An address (`10.1.2.3`, `[::1]`) as a range of its own, or a CIDR range (`10.0.0.0/8`); `None`
/// for a name or a prefix longer than the address.
fn cidr(entry: &str) -> Option<(IpAddr, u8)> {
    let (address, bits) = match entry.split_once('/') {
        Some((address, bits)) => (address, Some(bits.parse::<u8>().ok()?)),
        None => (entry, None),
    };
    let ip = address.trim_matches(['[', ']']).parse::<IpAddr>().ok()?;
    let width = if ip.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(width);
    (bits <= width).then_some((ip, bits))
}

/// Whether `ip` lies in the range (the same family, its first `bits` bits equal).
fn within(ip: IpAddr, (net, bits): (IpAddr, u8)) -> bool {
    let leading = |a: u128, width: u8| if bits == 0 { 0 } else { a >> (width - bits) };
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            leading(u32::from(a).into(), 32) == leading(u32::from(b).into(), 32)
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => leading(a.into(), 128) == leading(b.into(), 128),
        _ => false,
    }
}

/// A connection: a TCP stream to the destination, to the proxy (a plain-HTTP request in
/// absolute form), or through a `CONNECT` tunnel.
pub struct Conn {
    io: TokioIo<TcpStream>,
    /// The request goes to the proxy in absolute form.
    proxied: bool,
}

impl Connection for Conn {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.proxied)
    }
}

impl hyper::rt::Read for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Connects to a destination directly, or through the proxy [`Proxies`] names for it.
#[derive(Clone)]
pub struct Connector {
    tcp: HttpConnector,
    proxies: std::sync::Arc<Proxies>,
}

impl Connector {
    pub fn new(tcp: HttpConnector, proxies: std::sync::Arc<Proxies>) -> Self {
        Connector { tcp, proxies }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower_service::Service<Uri> for Connector {
    type Response = Conn;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Conn, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let mut tcp = self.tcp.clone();
        let proxy = self.proxies.for_uri(&dst).cloned();
        Box::pin(async move {
            let https = dst
                .scheme_str()
                .is_some_and(|s| s.eq_ignore_ascii_case("https"));
            match proxy {
                None => {
                    let io = tcp.call(dst).await?;
                    Ok(Conn { io, proxied: false })
                }
                Some(proxy) if https => {
                    let shown = proxy.uri.to_string();
                    let mut tunnel = Tunnel::new(proxy.uri, tcp);
                    if let Some(auth) = proxy.auth {
                        tunnel = tunnel.with_auth(auth);
                    }
                    let io = tunnel.call(dst).await.map_err(|e| -> BoxError {
                        format!("the proxy {shown} opened no tunnel: {e}").into()
                    })?;
                    Ok(Conn { io, proxied: false })
                }
                Some(proxy) => {
                    let shown = proxy.uri.to_string();
                    let io = tcp.call(proxy.uri).await.map_err(|e| -> BoxError {
                        format!("cannot connect to the proxy {shown}: {e}").into()
                    })?;
                    Ok(Conn { io, proxied: true })
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(vars: &[(&str, &str)]) -> Result<Proxies, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Proxies::from_vars(&|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    fn via(p: &Proxies, url: &str) -> Option<String> {
        p.for_uri(&url.parse().unwrap()).map(|p| p.uri.to_string())
    }

    #[test]
    fn each_scheme_has_its_proxy_and_no_proxy_bypasses_it() {
        let p = proxies(&[
            ("HTTP_PROXY", "http://plain:3128"),
            ("https_proxy", "tls.example:8080"),
            ("HTTPS_PROXY", "http://ignored:1"),
            ("NO_PROXY", "internal.example, .corp, 10.0.0.7,[::1]"),
        ])
        .unwrap();
        assert_eq!(
            via(&p, "http://api/x").as_deref(),
            Some("http://plain:3128/")
        );
        // The lower-case form first, as curl; no scheme is http://.
        assert_eq!(
            via(&p, "https://api.github.com/x").as_deref(),
            Some("http://tls.example:8080/")
        );
        for direct in [
            "https://internal.example/x",
            "https://git.internal.example/x",
            "https://CORP/x",
            "https://a.b.corp/x",
            "http://10.0.0.7:8080/x",
            "http://[::1]:80/x",
        ] {
            assert_eq!(via(&p, direct), None, "{direct}");
        }
        for proxied in [
            "https://notinternal.example/x",
            "https://corp.evil/x",
            "http://10.0.0.8/",
        ] {
            assert!(via(&p, proxied).is_some(), "{proxied}");
        }
        // CIDR ranges, as curl takes them; a name never matches a range.
        let nets = proxies(&[
            ("https_proxy", "http://p:1"),
            (
                "no_proxy",
                "10.0.0.0/8, 192.168.4.0/22, fd00::/8, 0.0.0.0/0x, 1.2.3.4/33",
            ),
        ])
        .unwrap();
        for direct in [
            "https://10.200.3.4/x",
            "https://192.168.7.255/x",
            "https://[fd12::1]:8443/x",
        ] {
            assert_eq!(via(&nets, direct), None, "{direct}");
        }
        for proxied in [
            "https://11.0.0.1/x",
            "https://192.168.8.0/x",
            "https://[fe80::1]/x",
            "https://1.2.3.4/x",
            "https://10.example/x",
        ] {
            assert!(via(&nets, proxied).is_some(), "{proxied}");
        }
        let every = proxies(&[("https_proxy", "http://p:1"), ("no_proxy", "0.0.0.0/0")]).unwrap();
        assert_eq!(via(&every, "https://203.0.113.9/"), None);
        assert!(via(&every, "https://[2001:db8::1]/").is_some());
        let all = proxies(&[("https_proxy", "http://p:1"), ("no_proxy", "*")]).unwrap();
        assert_eq!(via(&all, "https://api.github.com/"), None);
        let none = proxies(&[("HTTP_PROXY", "")]).unwrap();
        assert_eq!(via(&none, "http://api/"), None);
        let fallback = proxies(&[("ALL_PROXY", "http://all:9")]).unwrap();
        assert_eq!(
            via(&fallback, "https://h/").as_deref(),
            Some("http://all:9/")
        );
        // curl's default port.
        let bare = proxies(&[("http_proxy", "http://u:p@bare")]).unwrap();
        assert_eq!(
            via(&bare, "http://h/").as_deref(),
            Some("http://bare:1080/")
        );
    }

    #[test]
    fn the_proxys_userinfo_is_a_header_and_a_secret_never_shown() {
        let p = proxies(&[("HTTPS_PROXY", "http://alice:s%40cret-pw@proxy:3128")]).unwrap();
        let proxy = p.for_uri(&"https://h/".parse().unwrap()).unwrap();
        assert_eq!(proxy.uri.to_string(), "http://proxy:3128/");
        // base64("alice:s@cret-pw")
        assert_eq!(proxy.auth.as_ref().unwrap(), "Basic YWxpY2U6c0BjcmV0LXB3");
        assert!(p.secrets().iter().any(|s| s == "s@cret-pw"));
        assert!(p.secrets().iter().any(|s| s == "s%40cret-pw"));
        assert!(!format!("{p:?}").contains("cret"));
        let err = proxies(&[("HTTPS_PROXY", "socks5://bob:hunter22@p:1080")]).unwrap_err();
        assert!(
            err.contains("$HTTPS_PROXY") && !err.contains("hunter22"),
            "{err}"
        );
    }

    #[test]
    fn base64_as_rfc_4648() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }
}
