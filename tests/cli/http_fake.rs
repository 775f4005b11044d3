//! What the fake forges share: reading a request ([`read_request`]), writing an answer
//! ([`Response`]), a status's reason, a route's segments ([`under`]), a query's values, the accept loop of a loopback server that stops when dropped
//! ([`Loop`]); and the network around them: a TLS front ([`TlsFront`], HTTPS with the test
//! CA of `tests/fixtures/tls`, whose key was discarded once it signed `localhost`'s
//! certificate) and a recording proxy ([`RecordingProxy`]: plain-HTTP requests in absolute
//! form forwarded, `CONNECT` tunnels opened, each recorded). Loopback only.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// A request's line, headers (lower-cased names, in order) and body.
pub struct Request {
    pub method: String,
    /// As sent: a path and query (origin form).
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Reads one request (a `content-length` body, if any).
pub fn read_request(reader: &mut impl BufRead) -> std::io::Result<Request> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let target = parts.next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            let (n, v) = (n.trim().to_ascii_lowercase(), v.trim().to_owned());
            if n == "content-length" {
                length = v.parse().unwrap_or(0);
            }
            headers.push((n, v));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Request {
        method,
        target,
        headers,
        body,
    })
}

/// A status's reason phrase.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        407 => "Proxy Authentication Required",
        410 => "Gone",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        502 => "Bad Gateway",
        _ => "Status",
    }
}

/// The query's values of a request target (not decoded).
pub fn query(target: &str) -> HashMap<String, String> {
    target
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// An answer of a fake server: its status, headers (besides the content type and length it is
/// written with) and body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, headers: Vec<(String, String)>, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status,
            headers,
            body: body.into(),
        }
    }

    /// The status line and headers, `content-type` added (none for a 204), without the blank
    /// line that ends them: a caller adds its length or chunked encoding.
    pub fn head(&self, content_type: &str) -> String {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (n, v) in &self.headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        if self.status != 204 {
            head.push_str(&format!("content-type: {content_type}\r\n"));
        }
        head
    }

    /// Writes the whole answer with its length, then closes the exchange.
    pub fn write(&self, out: &mut impl Write, content_type: &str) -> std::io::Result<()> {
        let mut head = self.head(content_type);
        head.push_str(&format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            self.body.len()
        ));
        out.write_all(head.as_bytes())?;
        out.write_all(&self.body)?;
        out.flush()
    }
}

/// A request target under an API's prefix: the path after it (query included) and its
/// segments; `None` when the target is not under the prefix.
pub fn under<'a>(target: &'a str, prefix: &str) -> Option<(&'a str, Vec<&'a str>)> {
    let rest = target.strip_prefix(prefix)?;
    let path = rest.split('?').next().unwrap_or("");
    Some((rest, path.trim_start_matches('/').split('/').collect()))
}

/// The `body` field of a JSON request body (a comment's or a note's text), or "".
pub fn body_text(body: Option<&serde_json::Value>) -> String {
    body.and_then(|b| b.get("body"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// A loopback listener whose connections are handed, one at a time, to a handler until it is
/// dropped (or its lifetime ends).
pub struct Loop {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Loop {
    pub fn spawn(
        lifetime: Duration,
        mut handle: impl FnMut(TcpStream, &AtomicBool) + Send + 'static,
    ) -> Loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + lifetime;
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let _ = stream.set_nonblocking(false);
                            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                            handle(stream, &stop);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        Err(_) => break,
                    }
                }
            })
        };
        Loop {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The test CA's certificate (PEM), which a client must be told to trust.
pub fn test_ca() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls/ca.pem")
}

/// A runtime on a thread of its own, running `serve` until the returned sender is dropped.
fn background<F>(serve: F) -> tokio::sync::oneshot::Sender<()>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            tokio::select! {
                _ = serve => {}
                _ = stopped => {}
            }
        });
    });
    stop
}

/// HTTPS at `https://localhost:PORT` in front of a plain loopback server: each connection's
/// TLS ended here (the certificate of `localhost` and 127.0.0.1, signed by [`test_ca`]) and
/// its bytes piped to the server. Counts the connections it accepted.
pub struct TlsFront {
    pub port: u16,
    pub connections: Arc<Mutex<usize>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl TlsFront {
    pub fn before(backend_port: u16) -> TlsFront {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let dir = test_ca().parent().unwrap().to_owned();
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(dir.join("localhost.pem"))
                .unwrap()
                .map(Result::unwrap)
                .collect();
        let key = PrivateKeyDer::from_pem_file(dir.join("localhost.key")).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let std_listener = TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let port = std_listener.local_addr().unwrap().port();
        let connections = Arc::new(Mutex::new(0));
        let count = connections.clone();
        let stop = background(async move {
            let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
            while let Ok((tcp, _)) = listener.accept().await {
                *count.lock().unwrap() += 1;
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) =
                        tokio::net::TcpStream::connect(("127.0.0.1", backend_port)).await
                    else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        TlsFront {
            port,
            connections,
            _stop: stop,
        }
    }

    /// `https://localhost:PORT`.
    pub fn url(&self) -> String {
        format!("https://localhost:{}", self.port)
    }

    pub fn connections(&self) -> usize {
        *self.connections.lock().unwrap()
    }
}

/// What the proxy did: a request forwarded (`GET http://…`) or a tunnel opened
/// (`CONNECT host:port`), with the request's headers (lower-cased names).
#[derive(Debug, Clone)]
pub struct Proxied {
    pub method: String,
    /// The absolute URL, or the tunnel's `host:port`.
    pub target: String,
    pub headers: Vec<(String, String)>,
}

impl Proxied {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A forward proxy on loopback that wants `Proxy-Authorization: Basic` of `user:password`
/// (407 otherwise) and records everything it is asked: an absolute-form request is forwarded
/// to its host (in origin form, one request a connection) and its answer piped back; a
/// `CONNECT` opens a tunnel to its `host:port` (`localhost` is 127.0.0.1).
pub struct RecordingProxy {
    pub port: u16,
    pub record: Arc<Mutex<Vec<Proxied>>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl RecordingProxy {
    pub fn start(user: &str, password: &str) -> RecordingProxy {
        let expected = format!("Basic {}", base64(format!("{user}:{password}").as_bytes()));
        let std_listener = TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let port = std_listener.local_addr().unwrap().port();
        let record = Arc::new(Mutex::new(Vec::new()));
        let seen = record.clone();
        let stop = background(async move {
            let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
            while let Ok((tcp, _)) = listener.accept().await {
                let (seen, expected) = (seen.clone(), expected.clone());
                tokio::spawn(async move {
                    let _ = proxy_one(tcp, &seen, &expected).await;
                });
            }
        });
        RecordingProxy {
            port,
            record,
            _stop: stop,
        }
    }

    /// `http://USER:PASSWORD@127.0.0.1:PORT`.
    pub fn url_with(&self, user: &str, password: &str) -> String {
        format!("http://{user}:{password}@127.0.0.1:{}", self.port)
    }

    pub fn record(&self) -> Vec<Proxied> {
        self.record.lock().unwrap().clone()
    }
}

async fn proxy_one(
    tcp: tokio::net::TcpStream,
    seen: &Mutex<Vec<Proxied>>,
    expected: &str,
) -> std::io::Result<()> {
    let mut client = BufReader::new(tcp);
    let mut line = String::new();
    client.read_line(&mut line).await?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let target = parts.next().unwrap_or("").to_owned();
    let mut head_lines = Vec::new();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        client.read_line(&mut h).await?;
        let h = h.trim_end().to_owned();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            let (n, v) = (n.trim().to_ascii_lowercase(), v.trim().to_owned());
            if n == "content-length" {
                length = v.parse().unwrap_or(0);
            }
            headers.push((n, v));
        }
        head_lines.push(h);
    }
    seen.lock().unwrap().push(Proxied {
        method: method.clone(),
        target: target.clone(),
        headers: headers.clone(),
    });
    let authorized = headers
        .iter()
        .any(|(n, v)| n == "proxy-authorization" && v == expected);
    if !authorized {
        client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm=\"test\"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await?;
        return Ok(());
    }
    let authority_of = |t: &str| t.replace("localhost:", "127.0.0.1:");
    if method == "CONNECT" {
        let mut origin = tokio::net::TcpStream::connect(authority_of(&target)).await?;
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
        let _ = tokio::io::copy_bidirectional(&mut client, &mut origin).await;
        return Ok(());
    }
    // `http://host:port/path?query`: to the host, in origin form, one request.
    let rest = target.strip_prefix("http://").unwrap_or(&target);
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut origin = tokio::net::TcpStream::connect(authority_of(authority)).await?;
    let mut head = format!(
        "{method} {} HTTP/1.1\r\n",
        if path.is_empty() { "/" } else { path }
    );
    for h in &head_lines {
        let name = h
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if name != "proxy-authorization" && name != "connection" {
            head.push_str(h);
            head.push_str("\r\n");
        }
    }
    head.push_str("connection: close\r\n\r\n");
    origin.write_all(head.as_bytes()).await?;
    let mut body = vec![0; length];
    client.read_exact(&mut body).await?;
    origin.write_all(&body).await?;
    let mut client = client.into_inner();
    tokio::io::copy(&mut origin, &mut client).await?;
    client.shutdown().await
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                ABC[((n >> (18 - 6 * i)) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}
