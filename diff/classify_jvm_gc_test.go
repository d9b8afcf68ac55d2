package diff

import (
	"testing"

	"github.com/profdiff/profdiff/profile"
)

// HotSpot's collectors are named by their classes (G1*, PS*, Z*, X*,
// Shenandoah*, the Serial generations), but a program's own C++ classes
// that merely start with those letters are not the collector; and the
// JDK's native file and socket calls are io wherever they sit.
func TestJVMRulesNameTheCollectorOnly(t *testing.T) {
	checkStacks(t, profile.KindCPU, []bucketCase{
		{[]string{"G1ParScanThreadState::trim_queue", "G1ParEvacuateFollowersClosure::do_void"}, GC},
		{[]string{"PSPromotionManager::drain_stacks_depth", "PSScavenge::invoke"}, GC},
		{[]string{"ZMark::work", "ZWorkers::run"}, GC},
		{[]string{"XHeap::alloc_page", "main"}, GC},
		{[]string{"ShenandoahHeap::evacuate_object", "main"}, GC},
		{[]string{"DefNewGeneration::collect", "main"}, GC},
		{[]string{"XmlParser::parse", "main"}, CPU},
		{[]string{"ZstdCompressor::compress", "main"}, CPU},
		{[]string{"PSDocument::render", "main"}, CPU},
		{[]string{"TenuredStudent::grade", "main"}, CPU},
		{[]string{"SerialPort::read_frame", "main"}, CPU},
		{[]string{"Parallelogram::area", "main"}, CPU},
	})
	checkStacks(t, profile.KindWall, []bucketCase{
		{[]string{"sun.nio.ch.FileDispatcherImpl.write0", "sun.nio.ch.IOUtil.write", "App.send"}, IO},
		{[]string{"sun.nio.ch.SocketDispatcher.write0", "App.send"}, IO},
		{[]string{"java.io.FileInputStream.readBytes", "App.load"}, IO},
		{[]string{"java.net.SocketOutputStream.socketWrite0", "App.send"}, IO},
	})
}
