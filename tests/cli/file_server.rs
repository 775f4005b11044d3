//! A loopback HTTP server for static files, standing in for GitHub's `releases/download`
//! URLs (or a mirror of them): `GET /PATH` answers the file ROOT/PATH with `200` and its
//! bytes, anything missing with `404`, as a release host does. Every request path is recorded.
//! [`FileServer::dripping`] sends each body one byte at a time, slowly (a storage host that
//! trickles). It stops when dropped.

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::http_fake::{read_request, Loop, Response};

/// A request as the file server saw it: path, and headers with lower-cased names.
pub type Seen = (String, Vec<(String, String)>);

pub struct FileServer {
    port: u16,
    requests: Arc<Mutex<Vec<Seen>>>,
    _loop: Loop,
}

impl FileServer {
    pub fn serve(root: &Path) -> FileServer {
        Self::start(root, None)
    }

    /// As [`FileServer::serve`], but each body is sent one byte every `interval` (the
    /// `content-length` first, as a slow host would), until the client hangs up or the
    /// server is dropped.
    pub fn dripping(root: &Path, interval: Duration) -> FileServer {
        Self::start(root, Some(interval))
    }

    fn start(root: &Path, drip: Option<Duration>) -> FileServer {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (root, seen) = (root.to_owned(), requests.clone());
        // Long enough for any test; it stops when dropped.
        let accept = Loop::spawn(Duration::from_secs(24 * 3600), move |stream, stop| {
            let _ = answer(stream, &root, &seen, drip, stop);
        });
        FileServer {
            port: accept.port,
            requests,
            _loop: accept,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// The requests so far with their headers, in order.
    pub fn requests_with_headers(&self) -> Vec<Seen> {
        self.requests.lock().unwrap().clone()
    }
}

fn answer(
    stream: TcpStream,
    root: &Path,
    requests: &Mutex<Vec<Seen>>,
    drip: Option<Duration>,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let request = read_request(&mut BufReader::new(stream.try_clone()?))?;
    let (method, path, headers) = (request.method, request.target, request.headers);
    requests.lock().unwrap().push((path.clone(), headers));
    let file = local_path(root, &path);
    let (status, body) = match file.and_then(|f| std::fs::read(f).ok()) {
        Some(bytes) if method == "GET" || method == "HEAD" => (200, bytes),
        Some(_) => (405, Vec::new()),
        None => (404, b"Not Found".to_vec()),
    };
    let mut out = stream;
    let mut head = Response::new(status, Vec::new(), Vec::new()).head("application/octet-stream");
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    out.write_all(head.as_bytes())?;
    if method == "HEAD" {
        return out.flush();
    }
    let Some(interval) = drip else {
        out.write_all(&body)?;
        return out.flush();
    };
    out.flush()?;
    for byte in body {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(interval);
        out.write_all(&[byte])?;
        out.flush()?;
    }
    Ok(())
}

/// ROOT/PATH for a request path made only of normal components (no `..`, no query).
fn local_path(root: &Path, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path.split('?').next()?.trim_start_matches('/'));
    relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| root.join(relative))
        .filter(|p| p.is_file())
}
