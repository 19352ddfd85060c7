// Command apicall is what a pod of the volume e2e tests runs to call the API server with the
// service-account token and CA that vk-cri projected into it. It prints who the API server
// says it is (a SelfSubjectReview) and whether it may read its own pod.
//
//	apicall SERVER POD    SERVER is host:port; the certificate is checked for kubernetes.default.svc
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: apicall SERVER POD")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

func read(name string) ([]byte, error) { return os.ReadFile(filepath.Join(saDir, name)) }

func run(server, pod string) error {
	token, err := read("token")
	if err != nil {
		return err
	}
	ca, err := read("ca.crt")
	if err != nil {
		return err
	}
	ns, err := read("namespace")
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("ca.crt holds no certificate")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "kubernetes.default.svc"},
	}}
	call := func(method, path string, body []byte) (int, []byte, error) {
		req, err := http.NewRequest(method, "https://"+server+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+string(token))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}

	code, body, err := call(http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		[]byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		return err
	}
	var review struct {
		Status struct {
			UserInfo struct {
				Username string              `json:"username"`
				Extra    map[string][]string `json:"extra"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		return fmt.Errorf("selfsubjectreview answered %d: %s", code, body)
	}
	fmt.Printf("selfsubjectreview %d user=%s pod=%v\n", code, review.Status.UserInfo.Username,
		review.Status.UserInfo.Extra["authentication.kubernetes.io/pod-name"])

	code, body, err = call(http.MethodGet, "/api/v1/namespaces/"+string(ns)+"/pods/"+pod, nil)
	if err != nil {
		return err
	}
	var got struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(body, &got)
	fmt.Printf("get pod %d kind=%s name=%s\n", code, got.Kind, got.Metadata.Name)
	return nil
}
