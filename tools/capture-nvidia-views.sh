#!/bin/bash
# Records an NVIDIA machine for the fixtures: an hwaccel capture, every nvidia-smi view
# the detectors and the telemetry reader may use (idle and under a bf16 matmul load),
# decode-like bandwidth probes and whole-process timings. Needs python3 with PyTorch and cc.
# Usage: tools/capture-nvidia-views.sh HWACCEL_BINARY OUTPUT.tgz (run as root on the GPU machine)
H=${1:?hwaccel binary}; OUTFILE=$(realpath -m ${2:?output .tgz})
C=/tmp/cap; rm -rf $C; mkdir -p $C/raw
cd $C
{ uname -a; cat /etc/os-release; nproc; free -g; } > raw/host.txt 2>&1
nvidia-smi > raw/nvidia-smi.txt 2>&1
$H capture --out $C/fixture --machine "${MACHINE:-$(nvidia-smi -L | head -1)}" > raw/capture.stdout 2> raw/capture.stderr; echo "capture rc=$?" >> raw/capture.stderr
$H detect --pretty > raw/detect.json 2> raw/detect.stderr
$H detect --table > raw/detect.table 2>&1
for a in "--help-query-gpu" "-q" "-q -x" "-L" "topo -m" "nvlink -s" "nvlink -c" "mig -lgi" "-q -d PERFORMANCE" "-q -d CLOCK" "-q -d POWER" "-q -d TEMPERATURE" "-q -d ECC" "-q -d MEMORY" "-q -d PAGE_RETIREMENT" "-q -d ROW_REMAPPER" "-q -d UTILIZATION" "--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv" "--help-query-compute-apps" "dmon -c 2" "nvlink -e"; do
  f=raw/nvsmi_$(echo "$a" | tr -c 'a-zA-Z0-9' '_' | cut -c1-60).txt
  { echo "\$ nvidia-smi $a"; timeout 30 nvidia-smi $a; echo "[exit $?]"; } > $f 2>&1
done
# every --query-gpu field this driver accepts, in one call; then field by field for the refused ones
python3 - <<'PY' > raw/query_fields.log 2>&1
import re, subprocess
h = subprocess.run(["nvidia-smi","--help-query-gpu"],capture_output=True,text=True).stdout
fields = []
for m in re.finditer(r'^"([^"]+)"', h, re.M):
    f=m.group(1)
    if f not in fields: fields.append(f)
open("raw/query_fields.txt","w").write("\n".join(fields)+"\n")
ok=[]
for f in fields:
    r=subprocess.run(["nvidia-smi","--query-gpu="+f,"--format=csv,noheader"],capture_output=True,text=True)
    if r.returncode==0: ok.append(f)
    else: print("refused", f, r.returncode, (r.stdout+r.stderr).strip()[:200])
open("raw/query_fields_ok.txt","w").write(",".join(ok)+"\n")
print(len(fields),"fields",len(ok),"accepted")
PY
Q=$(cat raw/query_fields_ok.txt)
sample() { nvidia-smi --query-gpu=$Q --format=csv > raw/query_all_$1.csv 2>&1; nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits > raw/query_all_$1_nounits.csv 2>&1; nvidia-smi -q -x > raw/q_x_$1.xml 2>&1; }
sample idle
# load: bf16 matmuls for ~12 s, sampled under load
python3 - <<'PY' > raw/load.log 2>&1 &
import torch,time
a=torch.randn(8192,8192,device='cuda',dtype=torch.bfloat16); b=torch.randn_like(a)
t=time.time()
while time.time()-t<14:
    for _ in range(20): c=a@b
    torch.cuda.synchronize()
print("done")
PY
LP=$!
sleep 6; sample load; sleep 2; nvidia-smi dmon -c 3 > raw/dmon_load.txt 2>&1
wait $LP
# bandwidth and launch-overhead probes (decode-like): read-only sum, matvec over 32 weight matrices, empty-kernel launches
python3 - <<'PY' > raw/bandwidth_probe.txt 2>&1
import torch,time
torch.backends.cuda.matmul.allow_tf32=False
dev='cuda'
def timeit(fn,reps=20,warm=3):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps): fn()
    e.record(); torch.cuda.synchronize(); return s.elapsed_time(e)/reps/1e3
print("device", torch.cuda.get_device_name(), "SMs", torch.cuda.get_device_properties(0).multi_processor_count)
x=torch.empty(8*2**30//2,dtype=torch.bfloat16,device=dev).normal_()
t=timeit(lambda: x.sum()); print(f"read_sum 8GiB: {t*1e3:.3f} ms  {x.numel()*2/t/1e9:.0f} GB/s")
y=torch.empty_like(x); t=timeit(lambda: y.copy_(x)); print(f"copy 8GiB: {t*1e3:.3f} ms  read+write {2*x.numel()*2/t/1e9:.0f} GB/s")
del x,y
# Llama-3-8B-like layer set: 32 layers of q,k,v,o,gate,up,down in bf16, batch-1 matvec
H,I,KV=4096,14336,1024
layers=[[torch.empty(o,i,dtype=torch.bfloat16,device=dev).normal_() for (o,i) in [(H,H),(KV,H),(KV,H),(H,H),(I,H),(I,H),(H,I)]] for _ in range(32)]
nbytes=sum(w.numel()*2 for l in layers for w in l)
v=torch.randn(1,H,dtype=torch.bfloat16,device=dev); vi=torch.randn(1,I,dtype=torch.bfloat16,device=dev)
def tok():
    for l in layers:
        for w in l: torch.nn.functional.linear(vi if w.shape[1]==I else v, w)
t=timeit(tok); print(f"matvec 32x7 (eager) {nbytes/1e9:.2f} GB: {t*1e3:.3f} ms/token {nbytes/t/1e9:.0f} GB/s")
for B in (8,32,128):
    vb=torch.randn(B,H,dtype=torch.bfloat16,device=dev); vib=torch.randn(B,I,dtype=torch.bfloat16,device=dev)
    def tokb():
        for l in layers:
            for w in l: torch.nn.functional.linear(vib if w.shape[1]==I else vb, w)
    t=timeit(tokb,reps=10); print(f"batch {B} matmul eager: {t*1e3:.3f} ms/step {nbytes/t/1e9:.0f} GB/s {2*B*nbytes/2/t/1e12:.1f} TFLOP/s")
g=torch.cuda.CUDAGraph(); s=torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    tok()
torch.cuda.current_stream().wait_stream(s)
with torch.cuda.graph(g): tok()
t=timeit(lambda: g.replay()); print(f"matvec 32x7 (cuda graph): {t*1e3:.3f} ms/token {nbytes/t/1e9:.0f} GB/s")
z=torch.zeros(1,device=dev)
t=timeit(lambda: [z.add_(1) for _ in range(1000)],reps=5); print(f"tiny kernel launch (eager): {t/1000*1e6:.2f} us each")
PY
# whole-process timings (median of 30): C hello world, hwaccel --version, detect cpu-only, detect all (real nvidia-smi)
printf '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n' > /tmp/h.c; cc -O2 -o /tmp/hello /tmp/h.c 2>raw/cc.err
python3 - <<PY > raw/process_timings.txt 2>&1
import subprocess,time,statistics,os
H="$H"
cmds={"hello":["/tmp/hello"],"version":[H,"--version"],"detect_cpu":[H,"detect","--backends","cpu","--no-system-probes"],"detect_all":[H,"detect"],"nvidia-smi_query":["nvidia-smi","--query-gpu=name,memory.total","--format=csv"]}
for k,c in cmds.items():
    ts=[]
    for i in range(30 if k!="detect_all" else 15):
        t=time.perf_counter(); subprocess.run(c,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL); ts.append(time.perf_counter()-t)
    print(f"{k}: median {statistics.median(ts)*1e3:.2f} ms min {min(ts)*1e3:.2f} ms n={len(ts)}")
PY
ls /proc/driver/nvidia/gpus/ > raw/proc_gpus.txt 2>&1
tar czf $OUTFILE -C $C .
cat raw/capture.stderr raw/query_fields.log raw/bandwidth_probe.txt raw/process_timings.txt raw/detect.table
