// SPDX-License-Identifier: GPL-2.0

//! `rtlat monitor --listen`: GET /metrics over HTTP, in the format the
//! scraper's `Accept` asks for. The request is parsed by httparse (the
//! parser hyper uses); anything but `GET /metrics` is 404 (another path)
//! or 405 (another method), a malformed request 400, a head beyond
//! [`MAX_HEAD`] bytes 431. Each connection carries one request and is
//! closed after the answer.
//!
//! Bounded whatever the clients do: one thread accepts (an error there,
//! such as running out of file descriptors under a flood, is waited out,
//! never fatal), [`WORKERS`] threads answer, at most [`QUEUE`] connections
//! wait for them (more get 503 at once), and a client gets [`TIMEOUT`] to
//! send its request's head and as long to take the answer. The exposition is
//! encoded by the monitor's loop when it reads the statistics; a request
//! only copies it.

use std::{
    io::{self, Read, Write},
    net::{Shutdown, SocketAddr, TcpListener, TcpStream},
    sync::{
        mpsc::{self, TrySendError},
        Arc, Mutex,
    },
    thread,
    time::{Duration, Instant},
};

use super::metrics::Format;

/// How long a client may take to send the head of its request, and to
/// read the answer.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Threads answering requests.
pub const WORKERS: usize = 4;
/// Accepted connections waiting for a worker, at most.
pub const QUEUE: usize = 128;
/// Largest request head (the request line and the headers), bytes.
pub const MAX_HEAD: usize = 8192;
/// Headers of a request, at most.
const MAX_HEADERS: usize = 64;

/// The latest exposition, in both formats.
#[derive(Default)]
pub struct Exposition {
    pub openmetrics: String,
    pub text: String,
}

/// What the monitor's loop publishes and the server answers with.
#[derive(Default)]
pub struct Published(Mutex<Arc<Exposition>>);

impl Published {
    pub fn set(&self, e: Exposition) {
        *self.0.lock().unwrap() = Arc::new(e);
    }

    pub fn get(&self) -> Arc<Exposition> {
        self.0.lock().unwrap().clone()
    }
}

/// Binds `addr`, with the errors a user needs, one line each.
pub fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr).map_err(|e| bind_error(addr, &e))
}

/// What `--listen addr` failing with `e` says.
fn bind_error(addr: SocketAddr, e: &io::Error) -> String {
    if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EAFNOSUPPORT)) {
        return format!(
            "--listen {addr}: this kernel has no TCP/IP networking (CONFIG_NET, CONFIG_INET): {e}"
        );
    }
    match e.kind() {
        io::ErrorKind::AddrInUse => format!(
            "--listen {addr}: address already in use (another exporter, or another rtlat monitor, listens there)"
        ),
        io::ErrorKind::PermissionDenied => {
            format!("--listen {addr}: permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE)")
        }
        io::ErrorKind::AddrNotAvailable => format!("--listen {addr}: no such local address"),
        _ => format!("--listen {addr}: {e}"),
    }
}

/// An answer: status, content type, body.
pub struct Answer {
    pub code: u16,
    pub content_type: &'static str,
    pub body: String,
}

const PLAIN: &str = "text/plain; charset=utf-8";

fn plain(code: u16, body: &str) -> Answer {
    Answer {
        code,
        content_type: PLAIN,
        body: format!("{body}\n"),
    }
}

/// The answer to a request of `method` for `target` (a path, with or
/// without a query), accepting `accept`.
pub fn route(method: &str, target: &str, accept: Option<&str>, e: &Exposition) -> Answer {
    let path = target.split(['?', '#']).next().unwrap_or("");
    if path != "/metrics" {
        return plain(404, "not found: only /metrics is served");
    }
    if method != "GET" {
        return plain(405, "method not allowed: GET /metrics only");
    }
    let f = Format::from_accept(accept);
    Answer {
        code: 200,
        content_type: f.content_type(),
        body: match f {
            Format::OpenMetrics => e.openmetrics.clone(),
            Format::Text => e.text.clone(),
        },
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Writes `a` and closes the connection; a client gone, or too slow to
/// read, is its own loss.
fn answer(s: &mut TcpStream, a: &Answer) {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        a.code,
        reason(a.code),
        a.content_type,
        a.body.len()
    );
    if a.code == 405 {
        head.push_str("Allow: GET\r\n");
    }
    head.push_str("\r\n");
    let _ = s.set_write_timeout(Some(TIMEOUT));
    let _ = s
        .write_all(head.as_bytes())
        .and_then(|()| s.write_all(a.body.as_bytes()));
    let _ = s.shutdown(Shutdown::Both);
}

/// Reads one request from `s` and answers it.
fn handle(mut s: TcpStream, published: &Published) {
    let deadline = Instant::now() + TIMEOUT;
    let mut buf = vec![0u8; MAX_HEAD];
    let mut n = 0;
    loop {
        if n == buf.len() {
            return answer(&mut s, &plain(431, "request head too large"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return answer(&mut s, &plain(408, "request timeout"));
        }
        match s.read(&mut buf[n..]) {
            Ok(0) => return,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return answer(&mut s, &plain(408, "request timeout"));
            }
            Err(_) => return,
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..n]) {
            Ok(httparse::Status::Partial) => continue,
            Ok(httparse::Status::Complete(_)) => {
                let accept = req
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("accept"))
                    .and_then(|h| std::str::from_utf8(h.value).ok());
                let a = route(
                    req.method.unwrap_or(""),
                    req.path.unwrap_or(""),
                    accept,
                    &published.get(),
                );
                return answer(&mut s, &a);
            }
            Err(e) => return answer(&mut s, &plain(400, &format!("bad request: {e}"))),
        }
    }
}

/// Serves `published` on `listener`: the accepting thread and the
/// workers run until the process ends.
pub fn serve(listener: TcpListener, published: Arc<Published>) {
    let (tx, rx) = mpsc::sync_channel::<TcpStream>(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..WORKERS {
        let (rx, published) = (rx.clone(), published.clone());
        thread::spawn(move || loop {
            let next = rx.lock().unwrap().recv();
            match next {
                Ok(s) => handle(s, &published),
                Err(_) => return,
            }
        });
    }
    thread::spawn(move || loop {
        match listener.accept() {
            Ok((s, _)) => match tx.try_send(s) {
                Ok(()) => {}
                Err(TrySendError::Full(mut s)) => answer(&mut s, &plain(503, "busy, try again")),
                Err(TrySendError::Disconnected(_)) => return,
            },
            // Out of file descriptors, a connection reset before it was
            // accepted...: the next accept may do.
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    });
}

#[cfg(test)]
mod tests {
    use std::{
        io::{Read, Write},
        net::TcpStream,
        time::Instant,
    };

    use super::*;

    fn start() -> (SocketAddr, Arc<Published>) {
        let l = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = l.local_addr().unwrap();
        let p = Arc::new(Published::default());
        p.set(Exposition {
            openmetrics: "om\n# EOF\n".into(),
            text: "text\n".into(),
        });
        serve(l, p.clone());
        (addr, p)
    }

    /// Sends `req` and reads the whole answer (the request says close).
    fn ask(addr: SocketAddr, req: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(req).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    fn get(addr: SocketAddr, path: &str, accept: &str) -> String {
        ask(
            addr,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\n{accept}Connection: close\r\n\r\n")
                .as_bytes(),
        )
    }

    #[test]
    fn only_get_metrics_is_served() {
        let (addr, _) = start();
        let r = get(addr, "/metrics", "");
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.contains("text/plain; version=0.0.4"), "{r}");
        assert!(r.ends_with("\r\n\r\ntext\n"), "{r}");
        let r = get(
            addr,
            "/metrics?x=1",
            "Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n",
        );
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(
            r.contains("application/openmetrics-text; version=1.0.0"),
            "{r}"
        );
        assert!(r.ends_with("# EOF\n"), "{r}");
        assert!(get(addr, "/", "").starts_with("HTTP/1.1 404"));
        assert!(get(addr, "/metricsx", "").starts_with("HTTP/1.1 404"));
        let r = ask(
            addr,
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab",
        );
        assert!(r.starts_with("HTTP/1.1 405"), "{r}");
        assert!(r.contains("Allow: GET"), "{r}");
    }

    #[test]
    fn malformed_requests_are_refused_and_the_server_goes_on() {
        let (addr, _) = start();
        for (junk, want) in [
            (&b"\x00\x01\x02garbage\r\n\r\n"[..], "HTTP/1.1 400 "),
            (b"GET\r\n\r\n", "HTTP/1.1 400 "),
            (b"GET /metrics HTTP/9.9\r\n\r\n", "HTTP/1.1 400 "),
            (
                b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
                "HTTP/1.1 400 ",
            ),
            (b"GET /metrics HTTP/1.1\r\nX: \x01\r\n\r\n", "HTTP/1.1 400 "),
            (&[b'A'; 70_000][..], "HTTP/1.1 431 "),
        ] {
            let r = ask(addr, junk);
            assert!(
                r.starts_with(want),
                "{:?}: {r}",
                String::from_utf8_lossy(&junk[..junk.len().min(40)])
            );
        }
        let many: String = (0..100).map(|i| format!("X-{i}: y\r\n")).collect();
        let r = ask(
            addr,
            format!("GET /metrics HTTP/1.1\r\n{many}\r\n").as_bytes(),
        );
        assert!(r.starts_with("HTTP/1.1 400 "), "{r}");
        // A GET's nonsense length is no matter: it has no body to read.
        let r = ask(addr, b"GET /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200 "), "{r}");
        assert!(get(addr, "/metrics", "").starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn a_slow_client_does_not_hold_the_others() {
        let (addr, _) = start();
        // Half a request, never finished; and a connection that says nothing.
        let mut slow = TcpStream::connect(addr).unwrap();
        slow.write_all(b"GET /metr").unwrap();
        let _mute = TcpStream::connect(addr).unwrap();
        let t = Instant::now();
        assert!(get(addr, "/metrics", "").starts_with("HTTP/1.1 200"));
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // The slow one is told so and dropped after the timeout.
        slow.set_read_timeout(Some(TIMEOUT * 3)).unwrap();
        let mut buf = String::new();
        let t = Instant::now();
        let _ = slow.read_to_string(&mut buf);
        assert!(t.elapsed() < TIMEOUT * 3, "not dropped: {:?}", t.elapsed());
        assert!(buf.starts_with("HTTP/1.1 408 "), "{buf}");
    }

    #[test]
    fn many_concurrent_requests_are_answered() {
        let (addr, p) = start();
        let threads: Vec<_> = (0..100)
            .map(|i| {
                thread::spawn(move || {
                    let accept = if i % 2 == 0 {
                        "Accept: application/openmetrics-text\r\n"
                    } else {
                        ""
                    };
                    get(addr, "/metrics", accept)
                })
            })
            .collect();
        // The loop publishes while they ask.
        p.set(Exposition {
            openmetrics: "om\n# EOF\n".into(),
            text: "text\n".into(),
        });
        for t in threads {
            let r = t.join().unwrap();
            assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        }
    }

    #[test]
    fn a_kernel_without_networking_is_named() {
        let addr = "127.0.0.1:19101".parse().unwrap();
        for errno in [libc::ENOSYS, libc::EAFNOSUPPORT] {
            let e = bind_error(addr, &io::Error::from_raw_os_error(errno));
            assert!(
                e.starts_with("--listen 127.0.0.1:19101: this kernel has no TCP/IP networking (CONFIG_NET, CONFIG_INET): "),
                "{e}"
            );
        }
    }

    #[test]
    fn a_port_in_use_is_one_line_naming_it() {
        let l = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = l.local_addr().unwrap();
        let e = bind(addr).unwrap_err();
        assert_eq!(
            e,
            format!(
                "--listen {addr}: address already in use (another exporter, or another rtlat monitor, listens there)"
            )
        );
    }
}
