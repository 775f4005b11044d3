//! Behind a proxy, as on a company's self-hosted runner: `HTTP_PROXY` and `HTTPS_PROXY` name a
//! local proxy that wants a password (`http_fake::RecordingProxy`, which records every
//! request it forwards and every `CONNECT` tunnel it opens); the fake GitHub and GitLab APIs
//! and their storage hosts are behind it over plain HTTP, and over HTTPS through a TLS front
//! with a test CA the client is told to trust (`NSYS_GATE_CA_CERTS`). `run` posts and reads
//! its `--baseline auto` history on each forge with every request in the proxy's record; a
//! host in `NO_PROXY` is reached directly; the proxy's password is in no output; and no
//! request to GitLab or to a storage host carries GitHub's `X-GitHub-Api-Version`.
//!
//! Fakes: real nsys makes the runs; the forges, the storage, the proxy and TLS are loopback
//! stand-ins, as a test cannot reach GitHub, GitLab or a company's proxy.

use std::path::Path;
use std::process::{Command, Output};

use crate::baseline_auto::{pr_event, setup, TOKEN as GH_TOKEN};
use crate::common::{bin_process, read_json, stderr};
use crate::file_server::FileServer;
use crate::gitlab::{gitlab_job, pushes, text, Pushes, TOKEN as GL_TOKEN};
use crate::http_fake::{test_ca, RecordingProxy, TlsFront};
use crate::require_nsys;

const USER: &str = "runner";
const PASSWORD: &str = "Pr0xy-Secret-5kq8Zt";

/// `cmd` behind `proxy` (upper-case variables, as the runners set them), trusting
/// the test CA; `no_proxy` names the hosts reached directly.
fn behind(cmd: &mut Command, proxy: &RecordingProxy, no_proxy: Option<&str>) {
    let url = proxy.url_with(USER, PASSWORD);
    for name in [
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
    ] {
        cmd.env_remove(name);
    }
    cmd.env("HTTP_PROXY", &url)
        .env("HTTPS_PROXY", &url)
        .env("NSYS_GATE_CA_CERTS", test_ca());
    match no_proxy {
        Some(hosts) => cmd.env("NO_PROXY", hosts),
        None => cmd.env_remove("NO_PROXY"),
    };
}

/// The proxy's password (and its user:password) is in no output and no file of `dir`.
#[track_caller]
fn assert_no_password(out: &Output, dir: &Path) {
    let all = text(out);
    assert!(!all.contains(PASSWORD), "{all}");
    for entry in crate::common::files_in(dir) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(PASSWORD),
            "{}",
            entry.display()
        );
    }
}

/// Every record of the proxy carried its credentials, and none the forge's token.
#[track_caller]
fn assert_proxy_auth(proxy: &RecordingProxy) {
    let expected = format!(
        "Basic {}",
        crate::http_fake::base64(format!("{USER}:{PASSWORD}").as_bytes())
    );
    for r in proxy.record() {
        assert_eq!(
            r.header("proxy-authorization"),
            Some(expected.as_str()),
            "{r:?}"
        );
        if r.method == "CONNECT" {
            // The tunnel's request carries nothing of the forge's.
            assert_eq!(r.header("authorization"), None, "{r:?}");
            assert_eq!(r.header("private-token"), None, "{r:?}");
        }
    }
}

/// `run --baseline auto` of the head run on GitHub (pull request 7 of octo/gpu), posting.
fn github_run(head: &crate::common::Run, nsys: &Path, api: &str) -> Command {
    let event = pr_event(head.dir.parent().unwrap());
    let mut cmd = bin_process();
    cmd.args(["run", "--run-dir"])
        .arg(&head.dir)
        .arg("--nsys")
        .arg(nsys)
        .args(["--baseline", "auto", "--repo", "octo/gpu", "--api-url", api])
        .args(["--comment-key", "proxy"])
        .env("GITHUB_TOKEN", GH_TOKEN)
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env(
            "GITHUB_WORKFLOW_REF",
            "octo/gpu/.github/workflows/profile.yml@refs/pull/7/merge",
        )
        .env_remove("GITHUB_ACTIONS");
    cmd
}

#[test]
fn github_over_http_every_request_goes_through_the_proxy() {
    let nsys = require_nsys!("2024.2");
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = crate::baseline_auto::history(&base, &root, &storage);
    let proxy = RecordingProxy::start(USER, PASSWORD);
    let mut cmd = github_run(&head, &nsys, &server.api_url());
    behind(&mut cmd, &proxy, None);
    let out = cmd.output().unwrap();
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["baseline"]["kind"], "auto", "{}", stderr(&out));
    let runs = c["baseline"]["workflow_runs"].as_array().unwrap().len();
    assert!(runs >= 2, "{c}");
    assert_eq!(server.comments(7).len(), 1, "{}", stderr(&out));
    // Each request the API and the storage host saw, the proxy forwarded (absolute form).
    let record = proxy.record();
    let api = server.requests();
    let stored = storage.requests_with_headers();
    assert_eq!(record.len(), api.len() + stored.len(), "{record:?}");
    for r in &api {
        let url = format!("http://127.0.0.1:{}{}", server.port, r.path);
        assert!(
            record
                .iter()
                .any(|p| p.method == r.method && p.target == url),
            "{url} not in {record:?}"
        );
        assert_eq!(r.header_values("x-github-api-version"), ["2022-11-28"]);
        assert!(r.header_values("proxy-authorization").is_empty());
    }
    for (path, headers) in &stored {
        let url = format!("{}{path}", storage.url());
        assert!(record.iter().any(|p| p.target == url), "{url}");
        assert!(
            headers.iter().all(|(n, v)| n != "authorization"
                && n != "x-github-api-version"
                && !v.contains(GH_TOKEN)),
            "{headers:?}"
        );
    }
    assert_proxy_auth(&proxy);
    assert_no_password(&out, head.dir.parent().unwrap());
}

/// The API and the storage host over HTTPS (`localhost` and `127.0.0.1`, both in the test
/// CA's certificate), their downloads' redirects rewritten to the storage's TLS front.
#[test]
fn github_over_https_tunnels_through_the_proxy_and_no_proxy_goes_direct() {
    let nsys = require_nsys!("2024.2");
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = crate::baseline_auto::history(&base, &root, &storage);
    let api_tls = TlsFront::before(server.port);
    let storage_tls = TlsFront::before(storage_port(&storage));
    {
        let mut s = server.state();
        let plain = storage.url();
        let secure = format!("https://127.0.0.1:{}", storage_tls.port);
        for d in s.downloads.values_mut() {
            if let crate::github_server::Download::Redirect(url) = d {
                *url = url.replace(&plain, &secure);
            }
        }
    }
    let proxy = RecordingProxy::start(USER, PASSWORD);
    let mut cmd = github_run(&head, &nsys, &api_tls.url());
    // The storage host is reached directly; the API through the proxy.
    behind(&mut cmd, &proxy, Some("127.0.0.1"));
    let out = cmd.output().unwrap();
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["baseline"]["kind"], "auto", "{}", stderr(&out));
    assert_eq!(server.comments(7).len(), 1, "{}", stderr(&out));
    let record = proxy.record();
    // Only tunnels, all to the API: every TLS connection to it came through one.
    let api_authority = format!("localhost:{}", api_tls.port);
    assert!(!record.is_empty());
    assert!(
        record
            .iter()
            .all(|p| p.method == "CONNECT" && p.target == api_authority),
        "{record:?}"
    );
    assert_eq!(api_tls.connections(), record.len());
    // The storage host in NO_PROXY: reached, not through the proxy.
    let runs = c["baseline"]["workflow_runs"].as_array().unwrap().len();
    assert!(runs >= 2, "{c}");
    assert_eq!(storage.requests().len(), runs);
    assert!(storage_tls.connections() >= runs);
    for (_, headers) in storage.requests_with_headers() {
        // A host reached directly gets nothing of the proxy's, nor GitHub's own headers.
        assert!(
            headers.iter().all(|(n, v)| n != "x-github-api-version"
                && n != "proxy-authorization"
                && !v.contains("vnd.github")),
            "{headers:?}"
        );
    }
    assert_proxy_auth(&proxy);
    assert_no_password(&out, head.dir.parent().unwrap());

    // A wrong password: the proxy refuses the tunnel; said without either password.
    let mut cmd = bin_process();
    cmd.args(["post", "--report"])
        .arg(head.path("report.md"))
        .args(["--repo", "octo/gpu", "--pr", "7", "--api-url"])
        .arg(api_tls.url())
        .env("GITHUB_TOKEN", GH_TOKEN)
        .env_remove("GITHUB_ACTIONS");
    behind(&mut cmd, &proxy, None);
    let wrong = format!("http://{USER}:Wr0ng-Pa55word-x1@127.0.0.1:{}", proxy.port);
    cmd.env("HTTPS_PROXY", &wrong);
    let out = cmd.output().unwrap();
    let said = text(&out);
    assert!(
        !said.contains("Wr0ng-Pa55word-x1") && !said.contains(PASSWORD),
        "{said}"
    );
    assert!(said.contains("proxy"), "{said}");
}

/// The file server's port.
fn storage_port(storage: &FileServer) -> u16 {
    storage.url().rsplit(':').next().unwrap().parse().unwrap()
}

/// `run --baseline auto` of the head run in a merge request pipeline, posting a note.
fn gitlab_run(p: &Pushes, nsys: &Path, api: &str) -> Command {
    let mut cmd = gitlab_job(&p.server);
    cmd.env("CI_API_V4_URL", api)
        .args(["run", "--run-dir"])
        .arg(&p.head.dir)
        .arg("--nsys")
        .arg(nsys)
        .args(["--baseline", "auto", "--baseline-runs", "5"])
        .args(["--comment-key", "proxy"]);
    cmd
}

#[test]
fn gitlab_over_http_every_request_goes_through_the_proxy_without_githubs_headers() {
    let nsys = require_nsys!("2024.2");
    let p = pushes(&nsys);
    let proxy = RecordingProxy::start(USER, PASSWORD);
    let mut cmd = gitlab_run(&p, &nsys, &p.server.api_url());
    behind(&mut cmd, &proxy, None);
    let out = cmd.output().unwrap();
    let c = read_json(&p.head.path("comparison.json"));
    assert_eq!(c["baseline"]["job"], "profile", "{}", text(&out));
    assert_eq!(p.server.notes(7).len(), 1, "{}", text(&out));
    let record = proxy.record();
    let api = p.server.requests();
    let stored = p.storage.requests_with_headers();
    assert_eq!(record.len(), api.len() + stored.len(), "{record:?}");
    for r in &api {
        let url = format!("http://127.0.0.1:{}{}", p.server.port, r.path);
        assert!(
            record
                .iter()
                .any(|x| x.method == r.method && x.target == url),
            "{url} not in {record:?}"
        );
        // GitLab gets GitLab's header, and nothing of GitHub's.
        assert_eq!(r.header("private-token"), Some(GL_TOKEN), "{}", r.path);
        assert_eq!(r.header("x-github-api-version"), None, "{}", r.path);
        assert_eq!(r.header("authorization"), None, "{}", r.path);
    }
    for (path, headers) in &stored {
        let url = format!("{}{path}", p.storage.url());
        assert!(record.iter().any(|x| x.target == url), "{url}");
        assert!(
            headers.iter().all(|(n, v)| n != "x-github-api-version"
                && n != "private-token"
                && !v.contains(GL_TOKEN)),
            "{headers:?}"
        );
    }
    for r in &record {
        assert_eq!(r.header("x-github-api-version"), None, "{r:?}");
    }
    assert_proxy_auth(&proxy);
    assert_no_password(&out, p.head.dir.parent().unwrap());
}

#[test]
fn gitlab_over_https_tunnels_through_the_proxy_and_no_proxy_goes_direct() {
    let nsys = require_nsys!("2024.2");
    let p = pushes(&nsys);
    let api_tls = TlsFront::before(p.server.port);
    let storage_tls = TlsFront::before(storage_port(&p.storage));
    {
        let mut s = p.server.state();
        let plain = p.storage.url();
        let secure = format!("https://127.0.0.1:{}", storage_tls.port);
        for d in s.downloads.values_mut() {
            if let crate::gitlab_server::Download::Redirect(url) = d {
                *url = url.replace(&plain, &secure);
            }
        }
    }
    let proxy = RecordingProxy::start(USER, PASSWORD);
    let api = format!("{}/api/v4", api_tls.url());
    let mut cmd = gitlab_run(&p, &nsys, &api);
    behind(&mut cmd, &proxy, Some("127.0.0.1"));
    let out = cmd.output().unwrap();
    let c = read_json(&p.head.path("comparison.json"));
    assert_eq!(c["baseline"]["job"], "profile", "{}", text(&out));
    assert_eq!(p.server.notes(7).len(), 1, "{}", text(&out));
    let record = proxy.record();
    let api_authority = format!("localhost:{}", api_tls.port);
    assert!(!record.is_empty());
    assert!(
        record
            .iter()
            .all(|x| x.method == "CONNECT" && x.target == api_authority),
        "{record:?}"
    );
    assert_eq!(api_tls.connections(), record.len());
    assert_eq!(p.storage.requests().len(), 4);
    assert!(storage_tls.connections() >= 4);
    for r in p.server.requests() {
        assert_eq!(r.header("x-github-api-version"), None, "{}", r.path);
    }
    for (_, headers) in p.storage.requests_with_headers() {
        assert!(
            headers.iter().all(|(n, _)| n != "x-github-api-version"),
            "{headers:?}"
        );
    }
    assert_proxy_auth(&proxy);
    assert_no_password(&out, p.head.dir.parent().unwrap());

    // Without NO_PROXY, the storage host's HTTPS downloads go through tunnels of their own, and
    // what reaches it inside them carries nothing of the proxy's.
    let proxy = RecordingProxy::start(USER, PASSWORD);
    let before = (p.storage.requests().len(), storage_tls.connections());
    let mut cmd = gitlab_run(&p, &nsys, &api);
    behind(&mut cmd, &proxy, None);
    let out = cmd.output().unwrap();
    assert_eq!(p.server.notes(7).len(), 1, "{}", text(&out));
    let record = proxy.record();
    let storage_authority = format!("127.0.0.1:{}", storage_tls.port);
    let tunnels_to_storage = record
        .iter()
        .filter(|x| x.method == "CONNECT" && x.target == storage_authority)
        .count();
    assert_eq!(p.storage.requests().len() - before.0, 4, "{record:?}");
    assert!(tunnels_to_storage >= 4, "{record:?}");
    assert_eq!(
        storage_tls.connections() - before.1,
        tunnels_to_storage,
        "every connection to the storage came through a tunnel"
    );
    assert!(record.iter().all(|x| x.method == "CONNECT"), "{record:?}");
    for (_, headers) in p.storage.requests_with_headers() {
        assert!(
            headers.iter().all(|(n, _)| n != "proxy-authorization"),
            "{headers:?}"
        );
    }
    assert_proxy_auth(&proxy);
    assert_no_password(&out, p.head.dir.parent().unwrap());
}
