package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
)

// The allocation store's file is a checkpoint laid out as the kubelet's (its checkpointmanager
// and pkg/kubelet/allocation/state/checkpoint.go): the state serialised into a string, and a
// checksum of that string. No staging library exports the checkpoint manager, so the envelope
// is vk-cri's own; its checksum is computed as the kubelet's (FNV-32a of the data's hash dump).
// The checksum tells a damaged file (a torn write on a file system that lost the rename's
// order, a disk error, a hand edit) from a file of a newer layout, whose checksum holds.

// allocationCheckpoint is the file's envelope.
type allocationCheckpoint struct {
	// Data is the JSON of an allocationState.
	Data     string `json:"data"`
	Checksum uint64 `json:"checksum"`
}

// ErrCorruptAllocationCheckpoint is a checkpoint whose content is not what was written.
var ErrCorruptAllocationCheckpoint = errors.New("allocation checkpoint is corrupt")

// NewerAllocationCheckpointError is a sound checkpoint in a layout this vk-cri does not know.
type NewerAllocationCheckpointError struct{ Version int }

func (e *NewerAllocationCheckpointError) Error() string {
	return fmt.Sprintf("allocation checkpoint has version %d, written by a newer vk-cri (this one reads versions up to %d)", e.Version, allocationVersion)
}

func allocationChecksum(data string) uint64 {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(data))
	return uint64(h.Sum32())
}

// encodeAllocationCheckpoint is the file's content for pods.
func encodeAllocationCheckpoint(pods map[types.UID]*podAllocation) ([]byte, error) {
	data, err := json.Marshal(allocationState{Version: allocationVersion, Pods: pods})
	if err != nil {
		return nil, fmt.Errorf("encoding the allocation checkpoint: %w", err)
	}
	out, err := json.Marshal(allocationCheckpoint{Data: string(data), Checksum: allocationChecksum(string(data))})
	if err != nil {
		return nil, fmt.Errorf("encoding the allocation checkpoint: %w", err)
	}
	return out, nil
}

// decodeAllocationCheckpoint reads a file's content: the checksummed envelope, or the data
// alone as version 1 wrote it. The error wraps ErrCorruptAllocationCheckpoint for a damaged file
// and is a *NewerAllocationCheckpointError for a newer layout (told by its version alone, before
// anything else of it is read). The result is never nil and has no nil entries.
func decodeAllocationCheckpoint(content []byte) (map[types.UID]*podAllocation, error) {
	// Both layouts are JSON objects: the envelope's fields and version 1's are read together,
	// and whichever is there says which layout the file has.
	var head struct {
		Data     string          `json:"data"`
		Checksum uint64          `json:"checksum"`
		Version  int             `json:"version"`
		Pods     json.RawMessage `json:"pods"`
	}
	if err := json.Unmarshal(content, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptAllocationCheckpoint, err)
	}
	data := content
	switch {
	case head.Data != "":
		if head.Version != 0 || head.Pods != nil {
			return nil, fmt.Errorf("%w: both a checksummed envelope and unchecked data", ErrCorruptAllocationCheckpoint)
		}
		if sum := allocationChecksum(head.Data); sum != head.Checksum {
			return nil, fmt.Errorf("%w: checksum %d, the data's is %d", ErrCorruptAllocationCheckpoint, head.Checksum, sum)
		}
		data = []byte(head.Data)
		var version struct {
			Version int `json:"version"`
		}
		if err := json.Unmarshal(data, &version); err != nil {
			return nil, fmt.Errorf("%w: data: %v", ErrCorruptAllocationCheckpoint, err)
		}
		switch {
		case version.Version > allocationVersion:
			return nil, &NewerAllocationCheckpointError{Version: version.Version}
		case version.Version != allocationVersion:
			return nil, fmt.Errorf("%w: checksummed data of version %d", ErrCorruptAllocationCheckpoint, version.Version)
		}
	case head.Checksum != 0:
		return nil, fmt.Errorf("%w: a checksum without data", ErrCorruptAllocationCheckpoint)
	case head.Version > allocationVersion:
		// A later layout might drop the envelope again; its version still says it is newer.
		return nil, &NewerAllocationCheckpointError{Version: head.Version}
	case head.Version != allocationLegacyVersion:
		return nil, fmt.Errorf("%w: neither a checksummed checkpoint nor version %d data", ErrCorruptAllocationCheckpoint, allocationLegacyVersion)
	}
	var st allocationState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%w: data: %v", ErrCorruptAllocationCheckpoint, err)
	}
	pods := make(map[types.UID]*podAllocation, len(st.Pods))
	for uid, a := range st.Pods {
		if a == nil {
			return nil, fmt.Errorf("%w: pod %s has no allocation", ErrCorruptAllocationCheckpoint, uid)
		}
		pods[uid] = a
	}
	return pods, nil
}
