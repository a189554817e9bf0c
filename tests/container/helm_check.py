"""Checks of the llmchaos chart's rendered manifests (run by helm-check.sh in its own venv).

    python helm_check.py validate FILE...            every document against the Kubernetes schemas
    python helm_check.py assert CASE FILE            the chart's promises for one rendered values case
    python helm_check.py run CASE FILE LLMCHAOS      the rendered container's command line, run

validate: each document of each file against kubernetes-validate's schemas of the oldest Kubernetes
the chart supports (Chart.yaml kubeVersion >=1.25) and the newest it ships, strict (unknown fields
refused). A ServiceMonitor (a CRD, no built-in schema) is checked by assert instead.
assert: Pod Security "restricted" on every pod (the Deployment's and the helm test hook's), the probes,
the arguments of each mode, the token from its Secret, the cases' ConfigMap at /cases, the Service and
the ServiceMonitor. run: the Deployment's arguments and environment, as rendered, given to the llmchaos binary built here
(the image's binary), with /cases replaced by a folder holding the ConfigMap's files and the address by
127.0.0.1 on an ephemeral port: it must start, print its `listening on` line, and answer the readiness
and liveness probes' paths with 200 (and, serve and proxy, an admin call without the token with 401).
Exit 0 when all hold; 1 with one line per failure otherwise.
"""

import base64
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import kubernetes_validate
import yaml

VERSIONS = ("1.25.0", "1.37.0")
CRD_KINDS = {"ServiceMonitor"}
RELEASE = "rel"  # helm-check.sh renders with this release name
FULLNAME = "rel-llmchaos"
UID = 65532
PSA_VOLUME_TYPES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                    "projected", "secret"}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def validate(paths):
    count = skipped = 0
    for path in paths:
        for doc in load(path):
            name = f"{path}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
            if doc.get("kind") in CRD_KINDS:
                skipped += 1
                continue
            for version in VERSIONS:
                try:
                    kubernetes_validate.validate(doc, version, strict=True)
                except kubernetes_validate.ValidationError as e:
                    check(False, f"{name} against {version}: {e.message} at {'/'.join(map(str, e.path))}")
                except Exception as e:  # SchemaNotFoundError and the like
                    check(False, f"{name} against {version}: {e}")
            count += 1
    print(f"validated {count} manifests against Kubernetes {' and '.join(VERSIONS)} (strict); "
          f"skipped {skipped} of a CRD kind")


def restricted(pod_spec, where):
    """Pod Security Standards, "restricted" profile (the checks that apply to a pod spec)."""
    psc = pod_spec.get("securityContext") or {}
    check(not pod_spec.get("hostNetwork") and not pod_spec.get("hostPID") and not pod_spec.get("hostIPC"),
          f"{where}: host namespaces")
    check(psc.get("runAsNonRoot") is True, f"{where}: pod runAsNonRoot is not true")
    check(psc.get("runAsUser") == UID and psc.get("runAsGroup") == UID, f"{where}: pod runAsUser/Group not {UID}")
    check((psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault", f"{where}: pod seccomp not RuntimeDefault")
    check(pod_spec.get("automountServiceAccountToken") is False, f"{where}: service account token mounted")
    for vol in pod_spec.get("volumes") or []:
        kinds = set(vol) - {"name"}
        check(kinds <= PSA_VOLUME_TYPES, f"{where}: volume {vol['name']} of type {sorted(kinds)}")
    containers = (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])
    check(containers, f"{where}: no containers")
    for c in containers:
        at = f"{where} container {c.get('name')}"
        sc = c.get("securityContext") or {}
        check(sc.get("runAsNonRoot") is True, f"{at}: runAsNonRoot is not true")
        check(sc.get("runAsUser") == UID and sc.get("runAsGroup") == UID, f"{at}: runAsUser/Group not {UID}")
        check(sc.get("readOnlyRootFilesystem") is True, f"{at}: readOnlyRootFilesystem is not true")
        check(sc.get("allowPrivilegeEscalation") is False, f"{at}: allowPrivilegeEscalation is not false")
        check(not sc.get("privileged"), f"{at}: privileged")
        caps = sc.get("capabilities") or {}
        check(caps.get("drop") == ["ALL"], f"{at}: capabilities.drop is {caps.get('drop')}, not [ALL]")
        check(set(caps.get("add") or []) <= {"NET_BIND_SERVICE"}, f"{at}: capabilities added {caps.get('add')}")
        check((sc.get("seccompProfile") or {}).get("type") == "RuntimeDefault", f"{at}: seccomp not RuntimeDefault")
        for p in c.get("ports") or []:
            check("hostPort" not in p, f"{at}: hostPort")
        check(c.get("image") == "llmchaos:0.1.0", f"{at}: image {c.get('image')}")
        check(c.get("imagePullPolicy") == "IfNotPresent", f"{at}: imagePullPolicy {c.get('imagePullPolicy')}")


EXPECTED_ARGS = {
    "default": ["serve", "--host", "0.0.0.0", "--port", "8080"],
    "serve": ["serve", "--host", "0.0.0.0", "--port", "8080", "--script", "/cases/flaky.toml",
              "--public-url", "http://llmchaos.staging.svc:8080", "--max-sessions", "200"],
    "proxy": ["proxy", "--host", "0.0.0.0", "--port", "8080", "--upstream", "https://api.openai.com",
              "--script", "/cases/proxy-faults.toml", "--time-scale", "0.5"],
    "gateway": ["gateway", "--config", "/cases/gateway.toml", "--host", "0.0.0.0", "--port", "8080",
                "--allow-non-loopback"],
    "servicemonitor": ["serve", "--host", "0.0.0.0", "--port", "8080"],
}


def assert_case(case, path):
    by_kind = {}
    for d in load(path):
        by_kind.setdefault(d["kind"], []).append(d)
    pod = assert_deployment(case, by_kind)
    if pod is None:
        return
    c = pod["spec"]["containers"][0]
    assert_token(case, c, by_kind)
    assert_volumes(case, pod, c, by_kind)
    services = assert_service(case, pod, by_kind)
    assert_monitor(case, services, by_kind)
    assert_test_hook(case, services, by_kind)


def assert_deployment(case, by_kind):
    """The one Deployment: its name, labels, pod security, args, port and probes; its pod template."""
    deployments = by_kind.get("Deployment", [])
    if not check(len(deployments) == 1, f"{case}: {len(deployments)} Deployments"):
        return None
    dep = deployments[0]
    check(dep["metadata"]["name"] == FULLNAME, f"{case}: Deployment named {dep['metadata']['name']}")
    labels = dep["metadata"]["labels"]
    for key in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                "app.kubernetes.io/managed-by", "helm.sh/chart"):
        check(key in labels, f"{case}: Deployment lacks label {key}")
    pod = dep["spec"]["template"]
    spec = pod["spec"]
    restricted(spec, f"{case} Deployment")
    c = spec["containers"][0]
    check(c.get("args") == EXPECTED_ARGS[case], f"{case}: args {c.get('args')}")
    check(c["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}], f"{case}: ports {c['ports']}")
    ready = "/__llmchaos/ready"
    live = "/health" if case == "gateway" else "/__llmchaos/health"
    for probe, want in (("startupProbe", ready), ("readinessProbe", ready), ("livenessProbe", live)):
        get = (c.get(probe) or {}).get("httpGet") or {}
        check(get.get("path") == want and get.get("port") == "http", f"{case}: {probe} {get}")
    if case == "serve":
        check(pod["metadata"]["labels"].get("team") == "reliability", f"{case}: podLabels")
        check((pod["metadata"].get("annotations") or {}).get("example.com/owner") == "reliability",
              f"{case}: podAnnotations")
        for key in ("nodeSelector", "tolerations", "affinity"):
            check(key in spec, f"{case}: no {key}")
    return pod


def assert_token(case, c, by_kind):
    """The admin token from a Secret (generated, or the existing one), and the roots in the env."""
    env = {e["name"]: e for e in c.get("env") or []}
    ref = ((env.get("LLMCHAOS_ADMIN_TOKEN") or {}).get("valueFrom") or {}).get("secretKeyRef") or {}
    secrets = by_kind.get("Secret", [])
    if case == "proxy":  # existingSecret
        check(ref == {"name": "team-chaos-token", "key": "admin-token"}, f"{case}: token ref {ref}")
        check(not secrets, f"{case}: a Secret rendered beside existingSecret")
    else:
        check(ref == {"name": f"{FULLNAME}-admin", "key": "token"}, f"{case}: token ref {ref}")
        check(len(secrets) == 1 and secrets[0]["metadata"]["name"] == f"{FULLNAME}-admin",
              f"{case}: the generated Secret")
        if secrets:
            token = base64.b64decode(secrets[0]["data"]["token"]).decode()
            check(len(token) == 48 and token.isalnum(), f"{case}: generated token of {len(token)} characters")
    check(env.get("LLMCHAOS_CASES_ROOT", {}).get("value") == "/cases", f"{case}: LLMCHAOS_CASES_ROOT")
    check(env.get("LLMCHAOS_REPORTS_ROOT", {}).get("value") == "/tmp", f"{case}: LLMCHAOS_REPORTS_ROOT")


def assert_volumes(case, pod, c, by_kind):
    """A writable emptyDir at /tmp; the cases ConfigMap (rendered or existing) read-only at /cases."""
    spec = pod["spec"]
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts") or []}
    vols = {v["name"]: v for v in spec.get("volumes") or []}
    check("tmp" in vols and "emptyDir" in vols["tmp"] and mounts.get("/tmp", {}).get("name") == "tmp",
          f"{case}: no emptyDir at /tmp")
    configmaps = by_kind.get("ConfigMap", [])
    if case in ("default", "servicemonitor"):  # the image's own catalog stays at /cases
        check("/cases" not in mounts and not configmaps, f"{case}: /cases mounted without cases")
        return
    want = "team-chaos-cases" if case == "proxy" else f"{FULLNAME}-cases"
    check(mounts.get("/cases", {}).get("readOnly") is True, f"{case}: /cases not mounted read-only")
    check(vols.get("cases", {}).get("configMap", {}).get("name") == want, f"{case}: cases volume {vols.get('cases')}")
    if case == "proxy":
        check(not configmaps, f"{case}: a ConfigMap rendered beside existingConfigMap")
    else:
        files = {"serve": "flaky.toml", "gateway": "gateway.toml"}[case]
        check(len(configmaps) == 1 and files in configmaps[0].get("data", {}), f"{case}: ConfigMap data")
        check("checksum/cases" in (pod["metadata"].get("annotations") or {}), f"{case}: no checksum/cases")


def assert_service(case, pod, by_kind):
    """One Service on port 8080 selecting the Deployment's pods; the Services rendered."""
    services = by_kind.get("Service", [])
    if check(len(services) == 1, f"{case}: {len(services)} Services"):
        svc = services[0]
        check(svc["spec"]["ports"][0]["port"] == 8080 and svc["spec"]["ports"][0]["targetPort"] == "http",
              f"{case}: Service ports {svc['spec']['ports']}")
        sel = svc["spec"]["selector"]
        check(sel and all(pod["metadata"]["labels"].get(k) == v for k, v in sel.items()),
              f"{case}: the Service selects no pod of the Deployment")
    return services


def assert_monitor(case, services, by_kind):
    """A ServiceMonitor on /metrics only where the values ask for one."""
    monitors = by_kind.get("ServiceMonitor", [])
    if case != "servicemonitor":
        check(not monitors, f"{case}: a ServiceMonitor rendered")
        return
    if check(len(monitors) == 1, f"{case}: {len(monitors)} ServiceMonitors"):
        m = monitors[0]
        check(m["apiVersion"] == "monitoring.coreos.com/v1", f"{case}: ServiceMonitor {m['apiVersion']}")
        ep = m["spec"]["endpoints"][0]
        check(ep.get("path") == "/metrics" and ep.get("port") == "http" and ep.get("interval") == "15s",
              f"{case}: ServiceMonitor endpoint {ep}")
        check(m["metadata"]["labels"].get("release") == "prometheus", f"{case}: serviceMonitor.labels")
        check(services and all(services[0]["metadata"]["labels"].get(k) == v
                               for k, v in m["spec"]["selector"]["matchLabels"].items()),
              f"{case}: the ServiceMonitor selects no Service")


def assert_test_hook(case, services, by_kind):
    """The helm test hook: a restricted pod probing the Service's ready path, not selected by it."""
    tests = [p for p in by_kind.get("Pod", []) if (p["metadata"].get("annotations") or {}).get("helm.sh/hook") == "test"]
    if not check(len(tests) == 1, f"{case}: {len(tests)} helm test hook pods"):
        return
    t = tests[0]
    restricted(t["spec"], f"{case} test hook")
    tc = t["spec"]["containers"][0]
    check(t["spec"].get("restartPolicy") == "Never", f"{case}: test hook restartPolicy")
    check(tc.get("command") == ["/llmchaos"], f"{case}: test hook command {tc.get('command')}")
    check(tc.get("args", [])[:2] == ["probe", f"http://{FULLNAME}:8080/__llmchaos/ready"],
          f"{case}: test hook args {tc.get('args')}")
    sel = services[0]["spec"]["selector"] if services else {}
    check(not all(t["metadata"]["labels"].get(k) == v for k, v in sel.items()),
          f"{case}: the Service selects the test hook pod")


# Files a case names under /cases that its values take from an existingConfigMap (not rendered).
EXISTING_FILES = {"proxy": {"proxy-faults.toml": '[route.openai]\ndialect = "openai"\nscript = [{ fault = "ok" }]\n'}}


def http_status(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        return str(e)


def run_case(case, path, binary):
    docs = load(path)
    dep = next(d for d in docs if d["kind"] == "Deployment")
    c = dep["spec"]["template"]["spec"]["containers"][0]
    files = {}
    for d in docs:
        if d["kind"] == "ConfigMap":
            files.update(d.get("data") or {})
    files.update(EXISTING_FILES.get(case, {}))
    token = secrets.token_hex(16)
    for d in docs:
        if d["kind"] == "Secret":
            token = base64.b64decode(d["data"]["token"]).decode()
    with tempfile.TemporaryDirectory() as tmp:
        cases = os.path.join(tmp, "cases")
        os.mkdir(cases)
        for name, text in files.items():
            with open(os.path.join(cases, name), "w") as f:
                f.write(text)
        args, prev = [], None
        for a in c["args"]:
            if prev in ("--host", "--bind"):
                a = "127.0.0.1"
            elif prev == "--port":
                a = "0"
            elif a.startswith("/cases/"):
                a = os.path.join(cases, a[len("/cases/"):])
            args.append(a)
            prev = a
        env = dict(os.environ)
        for e in c.get("env") or []:
            env[e["name"]] = e.get("value", token)  # the one valueFrom is the token's secretKeyRef
        env["LLMCHAOS_CASES_ROOT"] = cases
        env["LLMCHAOS_REPORTS_ROOT"] = tmp
        proc = subprocess.Popen([binary] + args, cwd=tmp, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline().strip()  # the first line, flushed, or "" when it exits
            if not check(line.startswith("listening on http://"),
                         f"{case}: `llmchaos {' '.join(c['args'])}` did not start: {line!r} "
                         f"{proc.stderr.read() if proc.poll() is not None else ''}"):
                return
            base = line[len("listening on "):].rstrip("/")
            probes = {c[p]["httpGet"]["path"] for p in ("startupProbe", "readinessProbe", "livenessProbe")}
            for probe in sorted(probes):
                status = http_status(base + probe)
                check(status == 200, f"{case}: GET {probe} answered {status}")
            if case != "gateway":
                status = http_status(base + "/__llmchaos/ledger")
                check(status == 401, f"{case}: GET /__llmchaos/ledger without the token answered {status}")
            if not failures:
                print(f"{case}: llmchaos {c['args'][0]} started with the rendered arguments; "
                      f"{', '.join(sorted(probes))} answered 200")
        finally:
            proc.terminate()  # the pid this script started, nothing else
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def main(argv):
    if len(argv) >= 2 and argv[0] == "validate":
        validate(argv[1:])
    elif len(argv) == 3 and argv[0] == "assert":
        assert_case(argv[1], argv[2])
        if not failures:
            print(f"{argv[1]}: restricted securityContext, probes, args, token, cases, Service, hook: ok")
    elif len(argv) == 4 and argv[0] == "run":
        run_case(argv[1], argv[2], argv[3])
    else:
        sys.exit(__doc__)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
