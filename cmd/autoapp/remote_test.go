package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestAllowRemoteTakesABoolOrNames(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		allowed bool
		names   []string
		wrong   bool // the arguments are refused
	}{
		{"absent", nil, false, nil, false},
		{"alone", []string{"--allow-remote"}, true, nil, false},
		{"true", []string{"--allow-remote=true"}, true, nil, false},
		{"false", []string{"--allow-remote=false"}, false, nil, false},
		{"one name", []string{"--allow-remote=box.example"}, true, []string{"box.example"}, false},
		{"names, one with a port", []string{"--allow-remote=box.example, Box.Lan:9000"}, true, []string{"box.example", "Box.Lan:9000"}, false},
		{"repeated", []string{"--allow-remote=a.example", "--allow-remote=b.example"}, true, []string{"a.example", "b.example"}, false},
		{"an IPv6 address", []string{"--allow-remote=[fe80::1]:8080"}, true, []string{"[fe80::1]:8080"}, false},
		{"a URL", []string{"--allow-remote=http://box.example"}, false, nil, true},
		{"an empty name", []string{"--allow-remote=a.example,,b.example"}, false, nil, true},
		{"a path", []string{"--allow-remote=box.example/autoapp"}, false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var remote allowRemote
			fs.Var(&remote, "allow-remote", "")
			err := fs.Parse(tt.args)
			if tt.wrong {
				if err == nil {
					t.Fatalf("%q was accepted as %+v", tt.args, remote)
				}
				return
			}
			if err != nil || remote.allowed != tt.allowed || !reflect.DeepEqual(remote.names, tt.names) {
				t.Fatalf("%q parsed as %+v, %v; want allowed %v, names %q", tt.args, remote, err, tt.allowed, tt.names)
			}
		})
	}
}

func TestTheAcceptedHostsCarryTheRealPort(t *testing.T) {
	loopback := []string{"127.0.0.1:41234", "localhost:41234", "[::1]:41234"}
	tests := []struct {
		name   string
		addr   string
		remote []string
		want   []string
	}{
		{"loopback on port 0", "127.0.0.1:0", nil, loopback},
		{"localhost", "localhost:0", nil, []string{"localhost:41234", "127.0.0.1:41234", "[::1]:41234"}},
		{"IPv6 loopback", "[::1]:0", nil, []string{"[::1]:41234", "127.0.0.1:41234", "localhost:41234"}},
		{"every IPv4 interface", "0.0.0.0:0", nil, loopback},
		{"every interface", ":0", nil, loopback},
		{"every IPv6 interface", "[::]:0", nil, loopback},
		{"one address and a name", "192.0.2.10:0", []string{"Box.Lan"},
			append([]string{"192.0.2.10:41234", "box.lan:41234"}, loopback...)},
		{"a name behind a proxy", "127.0.0.1:0", []string{"autoapp.example:80"},
			append([]string{"127.0.0.1:41234", "autoapp.example:80"}, loopback[1:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := acceptedHosts(tt.addr, 41234, tt.remote)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("acceptedHosts(%q, %q) = %q, %v; want %q", tt.addr, tt.remote, got, err, tt.want)
			}
		})
	}
}

var answersLine = regexp.MustCompile(`^It answers at (.*); a request for any other name is refused\.$`)

// The server a person starts refuses another name before anything else:
// /healthz, and the setup of a fresh root (issue #14).
func TestServeAnswersOnlyAtItsNames(t *testing.T) {
	root := t.TempDir()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	out, w := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- serve(ctx, []string{"--root", root, "--addr", "127.0.0.1:0", "--allow-remote=box.example"}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	var addr, answers string
	for lines.Scan() {
		if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
		if m := answersLine.FindStringSubmatch(lines.Text()); m != nil {
			answers = m[1]
			break
		}
	}
	go io.Copy(io.Discard, out)
	if addr == "" || answers == "" {
		t.Fatalf("the server did not say where it serves and at which names (exit %v)", <-exit)
	}
	port := addr[strings.LastIndex(addr, ":"):]
	if want := "127.0.0.1" + port + ", box.example" + port + ", localhost" + port + ", [::1]" + port; answers != want {
		t.Fatalf("it answers at %s, want %s", answers, want)
	}

	// ask GETs /healthz, or POSTs form to /setup as a page at host would,
	// with a CSRF cookie of its own making.
	ask := func(host string, form url.Values) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
		if form != nil {
			req, err = http.NewRequest(http.MethodPost, "http://"+addr+"/setup", strings.NewReader(form.Encode()))
		}
		if err != nil {
			t.Fatal(err)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", "http://"+host)
			req.AddCookie(&http.Cookie{Name: "autoapp_csrf", Value: form.Get("_csrf")})
		}
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	for _, host := range []string{"127.0.0.1" + port, "LOCALHOST" + port, "box.example" + port} {
		if status, body := ask(host, nil); status != http.StatusOK {
			t.Errorf("/healthz at %s answered %d %q", host, status, body)
		}
	}
	refused := "This server answers only at http://127.0.0.1" + port + "/; it does not serve the name rebind.example" + port + "."
	if status, body := ask("rebind.example"+port, nil); status != http.StatusMisdirectedRequest || body != refused {
		t.Errorf("/healthz at rebind.example answered %d %q, want 421 %q", status, body, refused)
	}
	const token = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	form := url.Values{"name": {"Mallory"}, "password": {"a long password"}, "again": {"a long password"}, "_csrf": {token}}
	if status, body := ask("rebind.example"+port, form); status != http.StatusMisdirectedRequest || body != refused {
		t.Errorf("POST /setup at rebind.example answered %d %q, want 421 %q", status, body, refused)
	}

	stop()
	if code := <-exit; code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if exists, err := st.Owners.Exists(context.Background()); err != nil || exists {
		t.Fatalf("after the refused setup the owner exists: %v, %v", exists, err)
	}
}

func TestTrustedProxyTakesAddressesAndRanges(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		want  trustedProxies
		wrong bool // the arguments are refused
	}{
		{"absent", nil, nil, false},
		{"an address", []string{"--trusted-proxy=127.0.0.1"}, trustedProxies{"127.0.0.1"}, false},
		{"addresses and ranges", []string{"--trusted-proxy=10.0.0.0/8, ::1"}, trustedProxies{"10.0.0.0/8", "::1"}, false},
		{"repeated", []string{"--trusted-proxy=192.0.2.1", "--trusted-proxy=fd00::/8"}, trustedProxies{"192.0.2.1", "fd00::/8"}, false},
		{"a name", []string{"--trusted-proxy=proxy.example"}, nil, true},
		{"an address with a port", []string{"--trusted-proxy=127.0.0.1:8443"}, nil, true},
		{"an empty address", []string{"--trusted-proxy=127.0.0.1,"}, nil, true},
		{"a range out of bounds", []string{"--trusted-proxy=10.0.0.0/33"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var proxies trustedProxies
			fs.Var(&proxies, "trusted-proxy", "")
			err := fs.Parse(tt.args)
			if tt.wrong {
				if err == nil {
					t.Fatalf("%q was accepted as %q", tt.args, proxies)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(proxies, tt.want) {
				t.Fatalf("%q parsed as %q, %v; want %q", tt.args, proxies, err, tt.want)
			}
		})
	}
}

// A proxy forwards for names given with --allow-remote; without it a
// trusted proxy would be a way around the loopback rule.
func TestTrustedProxyNeedsAllowRemote(t *testing.T) {
	code, _, errOut := runCLI(t, "", "serve", "--root", t.TempDir(), "--addr", "127.0.0.1:0", "--trusted-proxy=127.0.0.1")
	if code != 2 || !strings.Contains(errOut, "--trusted-proxy needs --allow-remote") {
		t.Fatalf("exit %d, %q; want 2 and the sentence", code, errOut)
	}
	oneSentence(t, errOut)
}

var proxyLine = regexp.MustCompile(`^It believes the X-Forwarded-Host, -Proto and -For headers of requests from (.*) only\.$`)

// serve hands the proxies it was given to the Host check: a name the proxy
// forwards is checked like the Host.
func TestServeBelievesOnlyTheProxyItWasGiven(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	out, w := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- serve(ctx, []string{"--root", t.TempDir(), "--addr", "127.0.0.1:0",
			"--allow-remote=box.example:80", "--trusted-proxy=127.0.0.1"}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	var addr, believed string
	for lines.Scan() {
		if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
		if m := proxyLine.FindStringSubmatch(lines.Text()); m != nil {
			believed = m[1]
			break
		}
	}
	go io.Copy(io.Discard, out)
	if addr == "" || believed != "127.0.0.1" {
		t.Fatalf("the server did not say where it serves and which proxy it believes (%q, exit %v)", believed, <-exit)
	}
	for _, tt := range []struct {
		forwarded string
		status    int
	}{{"box.example", http.StatusOK}, {"evil.example", http.StatusMisdirectedRequest}} {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-Host", tt.forwarded)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.status {
			t.Errorf("/healthz forwarded for %s answered %d, want %d", tt.forwarded, res.StatusCode, tt.status)
		}
	}
	stop()
	if code := <-exit; code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}
