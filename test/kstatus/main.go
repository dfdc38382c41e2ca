// Command kstatus-check prints what kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status), the
// library Flux, kpt and cli-utils use to decide whether an object is reconciled, computes for
// Kubernetes objects. It reads JSON from stdin: one object, a List (`items`), or several objects
// one after another, and writes one JSON line per object:
//
//	{"kind":"Microservice","namespace":"ns","name":"a","status":"Current","message":"Resource is Ready"}
//
// An object kstatus cannot compute a status for yields "error" instead of "status". Exit code 0
// unless stdin is not JSON.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type result struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status,omitempty"`
	Message   string `json:"message,omitempty"`
	Error     string `json:"error,omitempty"`
}

func compute(obj map[string]interface{}, out *json.Encoder) error {
	u := &unstructured.Unstructured{Object: obj}
	if items, ok := obj["items"].([]interface{}); ok && u.IsList() {
		for _, item := range items {
			m, ok := item.(map[string]interface{})
			if !ok {
				return errors.New("a List item is not an object")
			}
			if err := compute(m, out); err != nil {
				return err
			}
		}
		return nil
	}
	r := result{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	res, err := status.Compute(u)
	if err != nil {
		r.Error = err.Error()
	} else {
		r.Status = res.Status.String()
		r.Message = res.Message
	}
	return out.Encode(r)
}

func main() {
	dec := json.NewDecoder(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return
		}
		var obj map[string]interface{}
		if err == nil {
			// As kubectl decodes: whole numbers become int64, which kstatus's accessors expect.
			err = utiljson.Unmarshal(raw, &obj)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kstatus-check: stdin is not JSON: %v\n", err)
			os.Exit(2)
		}
		if err := compute(obj, out); err != nil {
			fmt.Fprintf(os.Stderr, "kstatus-check: %v\n", err)
			os.Exit(2)
		}
	}
}
