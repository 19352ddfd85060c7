package compare

// Strict JSON decoding with errors that name the field and the expected kind of value.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// strictDecode decodes JSON into v, rejecting unknown fields.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return cleanJSONError(err)
	}
	return nil
}

// jsonError is a decoding error about one field (Field empty: about the value itself).
type jsonError struct {
	Field string
	Msg   string
}

func (e *jsonError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// cleanJSONError makes encoding/json's messages about the scenario format readable.
func cleanJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &jsonError{Field: te.Field, Msg: fmt.Sprintf("want %s, got a %s", jsonKind(te.Type), te.Value)}
	}
	return &jsonError{Msg: strings.TrimPrefix(err.Error(), "json: ")}
}

// within places an error under a field path: "prefix.field: msg", or "prefix: msg".
func within(prefix string, err error) string {
	var je *jsonError
	if errors.As(err, &je) && je.Field != "" {
		if prefix == "" {
			return je.Field + ": " + je.Msg
		}
		return prefix + "." + je.Field + ": " + je.Msg
	}
	if prefix == "" {
		return err.Error()
	}
	return prefix + ": " + err.Error()
}

// fieldOf is the field an error is about, if it says.
func fieldOf(err error) string {
	var je *jsonError
	if errors.As(err, &je) {
		return je.Field
	}
	return ""
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}
