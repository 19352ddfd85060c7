package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/virtual-kubelet/virtual-kubelet/log"
	logruslogger "github.com/virtual-kubelet/virtual-kubelet/log/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedv1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	"github.com/vk-cri/vk-cri/cm"
	"github.com/vk-cri/vk-cri/cri"
	"github.com/vk-cri/vk-cri/logrotate"
	"github.com/vk-cri/vk-cri/metrics"
	"github.com/vk-cri/vk-cri/provider"
	"github.com/vk-cri/vk-cri/provider/objectcache"
	"github.com/vk-cri/vk-cri/provider/runtimeclass"
	"github.com/vk-cri/vk-cri/provider/status"
	"github.com/vk-cri/vk-cri/provider/volumes"
	"github.com/vk-cri/vk-cri/server"
	"github.com/vk-cri/vk-cri/streaming"
)

func newRootCommand() *cobra.Command {
	o := defaultOptions()
	cmd := &cobra.Command{
		Use:   "vk-cri",
		Short: "A Kubernetes node agent that runs pods on a CRI runtime, as the kubelet does",
		Long: `vk-cri registers a Node through the virtual-kubelet framework and runs the pods bound to it
on a CRI runtime (containerd, CRI-O): sandboxes, containers, restarts, status and node health,
following the upstream kubelet's behaviour.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.ConfigFile != "" {
				if err := applyConfigFile(cmd.Flags(), o.ConfigFile); err != nil {
					return err
				}
			}
			if err := o.validate(); err != nil {
				return err
			}
			o.effective = flagValues(cmd.Flags())
			return run(cmd.Context(), o)
		},
	}
	o.addFlags(cmd.Flags())
	cmd.AddCommand(newCompareCommand(), newDrainNodesCommand())
	return cmd
}

func newLogger(o *options) (*logrus.Logger, error) {
	l := logrus.New()
	l.SetOutput(os.Stderr)
	lvl, err := logrus.ParseLevel(o.LogLevel)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	l.SetLevel(lvl)
	if o.LogFormat == "json" {
		l.SetFormatter(&logrus.JSONFormatter{})
	} else {
		l.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})
	}
	return l, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// defaultNodeIP picks the first global unicast IPv4 address of the host.
func defaultNodeIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("no non-loopback IPv4 address found; set --node-ip")
}

func run(ctx context.Context, o *options) error {
	logger, err := newLogger(o)
	if err != nil {
		return err
	}
	entry := logrus.NewEntry(logger).WithField("node", o.NodeName)
	log.L = logruslogger.FromLogrus(entry)
	ctx = log.WithLogger(ctx, log.L)

	if o.NodeIP == "" {
		if o.NodeIP, err = defaultNodeIP(); err != nil {
			return err
		}
	}
	cfg, credentialsLost, stopCredentials, err := apiCredentials(ctx, o, entry)
	if err != nil {
		return fmt.Errorf("API credentials: %w", err)
	}
	defer stopCredentials()
	cfg.UserAgent = "vk-cri/" + version
	// The kubelet's defaults (kubeAPIQPS 50, kubeAPIBurst 100); client-go's 5/10 would delay
	// status updates and events as soon as a few pods start at once.
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}

	rt, err := cri.Connect(ctx, o.CRIEndpoint, o.RuntimeRequestTimeout)
	if err != nil {
		return err
	}
	entry.WithFields(logrus.Fields{"endpoint": o.CRIEndpoint, "runtime": rt.RuntimeVersionString()}).Info("connected to the CRI runtime")
	cctx, cancelCheck := context.WithTimeout(ctx, o.RuntimeRequestTimeout)
	driver, fromRuntime, err := cri.CgroupDriver(cctx, rt.Runtime, o.CgroupDriver)
	cancelCheck()
	if err != nil {
		return fmt.Errorf("CRI endpoint %s: %w", o.CRIEndpoint, err)
	}
	o.CgroupDriver = driver
	entry.WithFields(logrus.Fields{"cgroupDriver": driver, "fromRuntime": fromRuntime}).Info("cgroup driver")
	promMetrics := metrics.New(o.NodeName)
	rt.Instrument(promMetrics)

	reservation, err := o.nodeReservation()
	if err != nil {
		return err
	}
	declared, err := o.declaredCapacity()
	if err != nil {
		return err
	}
	taints, err := parseTaints(o.RegisterWithTaints)
	if err != nil {
		return err
	}
	ownerClient, err := ownerLookupClient(o, client)
	if err != nil {
		return err
	}
	owners, err := nodeOwnerReferences(ctx, ownerClient, o.NodeOwnerClusterRole)
	if err != nil {
		return err
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedv1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "kubelet", Host: o.NodeName})

	var p *provider.Provider
	// One watch per ConfigMap or Secret a pod refers to, shared by volumes, env and pull secrets.
	objects := objectcache.New(ctx, client,
		objectcache.WithVolumeChanges(func(uid types.UID) { p.PodVolumesChanged(uid) }))
	vols := volumes.New(o.RootDir,
		volumes.WithClient(client),
		volumes.WithObjects(objects),
		volumes.WithForbidHostPath(o.ForbidHostPath),
		volumes.WithAllocatable(func() v1.ResourceList { return p.NodeAllocatable() }),
		volumes.WithLogger(entry))
	// As the kubelet: volumes with HostToContainer or Bidirectional propagation need a shared root.
	if err := vols.ShareRootDir(); err != nil {
		return fmt.Errorf("configuring root directory: %w", err)
	}
	measured, err := startStats(o, rt, func() []*v1.Pod { pods, _ := p.GetPods(ctx); return pods }, lateEvictor{&p}, recorder, entry)
	if err != nil {
		return err
	}
	// Every RuntimeClass, through one watch: the pods' sandboxes run with their handlers.
	runtimeClasses := runtimeclass.New(client)
	pcfg := provider.Config{
		NodeName:   o.NodeName,
		NodeIPs:    []string{o.NodeIP},
		PodLogRoot: o.PodLogDir,
		CgroupRoot: o.CgroupRoot,
		// The driver as the runtime reported it (above), or --cgroup-driver.
		CgroupDriver: cm.Driver(o.CgroupDriver),
		ResolvConf:   o.ResolvConf,
		Pods:         client.CoreV1(),
		Metrics:      promMetrics,

		ClusterDNS:            o.ClusterDNS,
		ClusterDomain:         o.ClusterDomain,
		RootDir:               o.RootDir,
		Objects:               provider.NewAPIObjects(ctx, client, objects),
		AllowedUnsafeSysctls:  o.AllowedUnsafeSysctls,
		SerializeImagePulls:   o.SerializeImagePulls,
		MaxParallelImagePulls: o.MaxParallelImagePulls,
		Volumes:               vols,
		RuntimeClasses:        runtimeClasses,
		// Admission checks pods against the Node as the API has it (labels, taints).
		Node: provider.NewAPINode(ctx, client, o.NodeName),
	}
	if o.CgroupsPerQOS {
		pcfg.PodCgroups, pcfg.NodeAllocatableCgroup, pcfg.PodCgroupOptions = podCgroups(o, reservation)
	}
	if measured != nil {
		pcfg.Stats = measured.collector
		pcfg.PressureAdmission = measured.admit
	}
	p = provider.New(pcfg, rt, recorder, entry)

	policy, err := o.logPolicy()
	if err != nil {
		return err
	}
	rotation, err := logrotate.New(rt.Runtime,
		logrotate.WithPolicy(policy),
		logrotate.WithInterval(o.ContainerLogMonitorInterval),
		logrotate.WithSelector(map[string]string{cri.OwnerLabel: o.NodeName}),
		logrotate.WithRequestTimeout(o.RuntimeRequestTimeout),
		logrotate.WithLogger(entry.WithField("component", "log-rotation")))
	if err != nil {
		return err
	}

	// virtual-kubelet serves nothing itself (no TLS config): its pod routes are captured and
	// served by vk-cri's kubelet API server, behind the kubelet's authentication.
	vkRoutes := &handlerCapture{}
	n, err := nodeutil.NewNode(o.NodeName,
		func(pc nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
			np, err := p.NewNodeProvider(pc.Node, provider.NodeOptions{
				Version:         version,
				RootDir:         o.RootDir,
				MaxPods:         o.MaxPods,
				KubeletPort:     o.Port,
				Labels:          o.NodeLabels,
				Taints:          taints,
				OwnerReferences: owners,
				Machine:         measured.machineInfo(),
				Pressure:        measured.pressure(),
				Reservation:     reservation,
				Capacity:        declared,
				// The kubelet API's WebSocket streams are served here (package streaming), in-place
				// resizes by the provider.
				DeclaredFeatures: declaredFeatures(streaming.DeclaredFeatures(), provider.DeclaredFeatures()),
			})
			if err != nil {
				return nil, nil, err
			}
			return p, np, nil
		},
		// nodeutil's cluster-wide Secret and ConfigMap informers are left empty: a node may not
		// list them, and vk-cri reads the ones its pods name through package objectcache.
		nodeutil.WithClient(withoutClusterWideSecrets(client)),
		nodeutil.AttachProviderRoutes(vkRoutes),
		func(c *nodeutil.NodeConfig) error {
			c.SkipDownwardAPIResolution = true
			c.EventRecorder = quietRecorder{}
			c.NumWorkers = o.Workers
			return nil
		},
		nodeutil.WithPodControllerConfigOverrides(func(c *node.PodControllerConfig) error {
			return status.FollowAPIStatus(c, p)
		}),
	)
	if err != nil {
		return fmt.Errorf("setting up the node: %w", err)
	}
	// A pod synced before the first list of RuntimeClasses would find none (and be retried
	// after the back-off). The wait is short: without the right to list them (an older
	// ClusterRole) the node must still come up.
	runtimeClasses.Start(ctx)
	rcCtx, cancelRC := context.WithTimeout(ctx, 10*time.Second)
	synced := runtimeClasses.WaitForSync(rcCtx)
	cancelRC()
	if !synced {
		entry.Warn("RuntimeClasses not listed within 10s (does the node's ClusterRole allow list/watch of node.k8s.io runtimeclasses?); pods with a runtimeClassName are retried until they are")
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	measured.run(ctx)
	newGarbageCollection(o, rt, p, measured, recorder, promMetrics, entry).Run(ctx)
	go rotation.Run(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	configz, err := configzSections(o)
	if err != nil {
		return fmt.Errorf("configz: %w", err)
	}
	apiErr := make(chan error, 1)
	go func() {
		apiErr <- runKubeletAPI(ctx, o, client, kubeletAPI{
			providerHandler: vkRoutes.handler,
			syncLoop:        p.SyncLoopHealthy,
			metrics:         promMetrics.Handler(),
			requests:        promMetrics,
			configz:         configz,
			systemLogDir:    systemLogDir(o),
			// The kubelet's data paths replace virtual-kubelet's handlers of the same routes.
			extra: append(measured.routes(), func(m server.Mux) {
				streaming.Register(m, p,
					streaming.WithIdleTimeout(o.StreamingConnectionIdleTimeout),
					streaming.WithLogger(entry.WithField("component", "kubelet-api")))
			}),
		}, entry)
	}()
	go func() {
		if err := n.WaitReady(ctx, 0); err == nil {
			entry.Info("node registered; pod and node controllers running")
		}
	}()
	nodeErr := make(chan error, 1)
	go func() { nodeErr <- n.Run(ctx) }()
	select {
	case err := <-credentialsLost:
		return fmt.Errorf("API credentials: %w", err)
	case err := <-apiErr:
		if err != nil {
			return fmt.Errorf("kubelet API: %w", err)
		}
		if err := <-nodeErr; err != nil && ctx.Err() == nil {
			return fmt.Errorf("node stopped: %w", err)
		}
	case err := <-nodeErr:
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("node stopped: %w", err)
		}
	}
	entry.Info("vk-cri stopped")
	return nil
}

// systemLogDir is the directory the kubelet API serves at /logs/, or "" when it serves none.
func systemLogDir(o *options) string {
	if !o.EnableSystemLogHandler {
		return ""
	}
	return o.SystemLogDir
}

// declaredFeatures is the node's declared features, sorted as the kubelet lists them.
func declaredFeatures(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.Strings(out)
	return out
}
