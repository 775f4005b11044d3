//! A loopback HTTP server for static files, standing in for GitHub's `releases/download`
//! URLs (or a mirror of them): `GET /PATH` answers the file ROOT/PATH with `200` and its
//! bytes, anything missing with `404`, as a release host does. Every request path is recorded.
//! [`FileServer::dripping`] sends each body one byte at a time, slowly (a storage host that
//! trickles). It stops when dropped.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A request as the file server saw it: path, and headers with lower-cased names.
pub type Seen = (String, Vec<(String, String)>);

pub struct FileServer {
    port: u16,
    requests: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
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
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (root, requests, stop) = (root.to_owned(), requests.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let _ = answer(stream, &root, &requests, drip, &stop);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        Err(_) => break,
                    }
                }
            })
        };
        FileServer {
            port,
            requests,
            stop,
            thread: Some(thread),
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

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn answer(
    stream: TcpStream,
    root: &Path,
    requests: &Mutex<Vec<Seen>>,
    drip: Option<Duration>,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim_end().is_empty() {
            break;
        }
        if let Some((n, v)) = header.trim_end().split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    requests.lock().unwrap().push((path.clone(), headers));
    let file = local_path(root, &path);
    let (status, body) = match file.and_then(|f| std::fs::read(f).ok()) {
        Some(bytes) if method == "GET" || method == "HEAD" => ("200 OK", bytes),
        Some(_) => ("405 Method Not Allowed", Vec::new()),
        None => ("404 Not Found", b"Not Found".to_vec()),
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )?;
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
