package translate

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// defaultReadonlyPaths are the /proc paths a container sees read-only unless its procMount is
// Unmasked (the list the kubelet and moby share).
var defaultReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}

// baseMaskedPaths are hidden from containers unless their procMount is Unmasked; the node adds
// the thermal_throttle directory of each CPU that has one (see DefaultMaskedPaths).
var baseMaskedPaths = []string{
	"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
	"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
	"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
}

// ImageUser is the user an image runs as by default: a numeric UID, or a name the runtime
// resolves inside the image.
type ImageUser struct {
	UID      *int64
	Username string
}

// effectiveSecurityContext merges the pod's security context into the container's: the
// identity, SELinux, seccomp and AppArmor settings of the pod apply unless the container sets
// its own.
func effectiveSecurityContext(pod *v1.Pod, c *v1.Container) *v1.SecurityContext {
	sc := &v1.SecurityContext{}
	if c.SecurityContext != nil {
		sc = c.SecurityContext.DeepCopy()
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return sc
	}
	if sc.RunAsUser == nil {
		sc.RunAsUser = psc.RunAsUser
	}
	if sc.RunAsGroup == nil {
		sc.RunAsGroup = psc.RunAsGroup
	}
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = psc.RunAsNonRoot
	}
	if sc.SELinuxOptions == nil {
		sc.SELinuxOptions = psc.SELinuxOptions
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = psc.SeccompProfile
	}
	if sc.AppArmorProfile == nil {
		sc.AppArmorProfile = psc.AppArmorProfile
	}
	return sc
}

// containerSecurityContext translates the effective security context into CRI's: identity
// (the image's user when none is set), groups (fsGroup first), capabilities, privileged,
// read-only root, no_new_privs, seccomp, AppArmor, masked and read-only /proc paths, and the
// namespaces shared with the pod.
func containerSecurityContext(node NodeFacts, pod *v1.Pod, c *v1.Container, img ImageUser) (*runtimeapi.LinuxContainerSecurityContext, error) {
	esc := effectiveSecurityContext(pod, c)
	sc := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: namespaceOptions(pod),
		Privileged:       isTrue(esc.Privileged),
		ReadonlyRootfs:   isTrue(esc.ReadOnlyRootFilesystem),
		// Only an explicit allowPrivilegeEscalation: false sets no_new_privs.
		NoNewPrivs:    esc.AllowPrivilegeEscalation != nil && !*esc.AllowPrivilegeEscalation,
		MaskedPaths:   maskedPaths(node, esc.ProcMount),
		ReadonlyPaths: readonlyPaths(esc.ProcMount),
	}
	if caps := esc.Capabilities; caps != nil {
		sc.Capabilities = &runtimeapi.Capability{}
		for _, a := range caps.Add {
			sc.Capabilities.AddCapabilities = append(sc.Capabilities.AddCapabilities, string(a))
		}
		for _, d := range caps.Drop {
			sc.Capabilities.DropCapabilities = append(sc.Capabilities.DropCapabilities, string(d))
		}
	}
	if o := esc.SELinuxOptions; o != nil {
		sc.SelinuxOptions = &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
	}
	if esc.RunAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *esc.RunAsUser}
	} else {
		if img.UID != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *img.UID}
		}
		sc.RunAsUsername = img.Username
	}
	if esc.RunAsGroup != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *esc.RunAsGroup}
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		sc.SupplementalGroups = podIdentityOf(psc).groups
		if psc.SupplementalGroupsPolicy != nil {
			policy, ok := runtimeapi.SupplementalGroupsPolicy_value[string(*psc.SupplementalGroupsPolicy)]
			if !ok {
				return nil, fmt.Errorf("unsupported supplementalGroupsPolicy: %s", *psc.SupplementalGroupsPolicy)
			}
			sc.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy(policy)
		}
	}
	var err error
	if sc.Seccomp, err = seccompProfile(node.SeccompRoot, esc.SeccompProfile); err != nil {
		return nil, err
	}
	if p := esc.AppArmorProfile; p != nil {
		sc.Apparmor = appArmorProfile(p)
	}
	return sc, nil
}

// seccompProfile is Unconfined unless the pod or container asks for a profile (the kubelet's
// default with seccompDefault off). Localhost profiles are files under root.
func seccompProfile(root string, p *v1.SeccompProfile) (*runtimeapi.SecurityProfile, error) {
	if p == nil {
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	}
	switch p.Type {
	case v1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case v1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return nil, fmt.Errorf("localhostProfile must be set if seccompProfile type is Localhost.")
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: filepath.Join(root, *p.LocalhostProfile)}, nil
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
}

func appArmorProfile(p *v1.AppArmorProfile) *runtimeapi.SecurityProfile {
	switch p.Type {
	case v1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case v1.AppArmorProfileTypeLocalhost:
		ref := ""
		if p.LocalhostProfile != nil {
			ref = *p.LocalhostProfile
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: ref}
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
}

func maskedPaths(node NodeFacts, pm *v1.ProcMountType) []string {
	if pm != nil && *pm == v1.UnmaskedProcMount {
		return []string{}
	}
	if node.MaskedPaths != nil {
		return node.MaskedPaths
	}
	return baseMaskedPaths
}

func readonlyPaths(pm *v1.ProcMountType) []string {
	if pm != nil && *pm == v1.UnmaskedProcMount {
		return []string{}
	}
	return defaultReadonlyPaths
}

// DefaultMaskedPaths is the masked path list of this host: the base list plus each CPU's
// thermal_throttle directory that exists, as the kubelet builds it.
func DefaultMaskedPaths(exists func(string) bool) []string {
	out := append([]string(nil), baseMaskedPaths...)
	for cpu := 0; cpu < 4096; cpu++ {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d", cpu)
		if !exists(dir) {
			break
		}
		if p := dir + "/thermal_throttle"; exists(p) {
			out = append(out, p)
		}
	}
	return out
}

// verifyRunAsNonRoot refuses a container that must not run as root but would: by its own or
// the pod's runAsUser, or by the image's user. A named image user cannot be checked.
func verifyRunAsNonRoot(pod *v1.Pod, c *v1.Container, img ImageUser) error {
	esc := effectiveSecurityContext(pod, c)
	if !isTrue(esc.RunAsNonRoot) {
		return nil
	}
	who := PodRef(pod)
	if esc.RunAsUser != nil {
		if *esc.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", who, c.Name)
		}
		return nil
	}
	switch {
	case img.UID == nil && img.Username != "":
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", img.Username, who, c.Name)
	case img.UID != nil && *img.UID == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", who, c.Name)
	case img.UID != nil:
		if errs := validation.IsValidUserID(*img.UID); len(errs) > 0 {
			return fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): %s (pod: %q, container: %s)",
				*img.UID, math.MaxInt32, strings.Join(errs, "; "), who, c.Name)
		}
	}
	return nil
}

// PodRef names a pod the way the kubelet's messages do: name_namespace(uid).
func PodRef(pod *v1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// TargetPIDNamespace makes a container with a private PID namespace join the target's instead;
// one that shares the pod's or the node's keeps it, as with the kubelet.
func TargetPIDNamespace(sc *runtimeapi.LinuxContainerSecurityContext, targetID string) {
	if targetID == "" || sc == nil || sc.NamespaceOptions == nil {
		return
	}
	if sc.NamespaceOptions.Pid == runtimeapi.NamespaceMode_CONTAINER {
		sc.NamespaceOptions.Pid = runtimeapi.NamespaceMode_TARGET
		sc.NamespaceOptions.TargetId = targetID
	}
}

// ImageUserOf is the user an image runs as: its numeric UID, else its user name, else root
// (an image that names no user runs as root).
func ImageUserOf(img *runtimeapi.Image) ImageUser {
	switch {
	case img != nil && img.Uid != nil:
		uid := img.Uid.Value
		return ImageUser{UID: &uid}
	case img != nil && img.Username != "":
		return ImageUser{Username: img.Username}
	}
	return ImageUser{UID: new(int64)}
}
