// The published device-spec table and the device matcher.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.hardware;

namespace hwaccel {
namespace {

constexpr std::uint64_t GiB = 1024ull * 1024 * 1024;
constexpr std::uint16_t nvidia = 0x10de;
constexpr std::uint16_t amd = 0x1002;
constexpr std::uint16_t habana = 0x1da3;

constexpr FabricSpec nvlink4_nvswitch{"nvlink", "NVLink 4 through NVSwitch (900 GB/s bidirectional)", 450.0, 8};
constexpr FabricSpec nvlink5_nvswitch{"nvlink", "NVLink 5 through NVSwitch (1.8 TB/s bidirectional)", 900.0, 8};
constexpr FabricSpec nvlink3_nvswitch{"nvlink", "NVLink 3 through NVSwitch (600 GB/s bidirectional)", 300.0, 8};
constexpr FabricSpec nvlink2_mesh{"nvlink", "NVLink 2 hybrid cube-mesh (300 GB/s bidirectional)", 150.0, 8};
constexpr FabricSpec mi300_xgmi{"xgmi", "Infinity Fabric, 7 xGMI links of 64 GB/s per direction to each peer", 448.0, 8};

// Each entry names only the fields its datasheet gives; the rest keep their
// defaults (empty optionals), which is what the warning would have us spell out.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-designated-field-initializers"
constexpr std::array<DeviceSpec, 55> specs = {{
    // --- NVIDIA ---------------------------------------------------------------
    {.id = "b200-sxm-180gb", .name = "B200-SXM-180GB", .product = "NVIDIA B200 (HGX/DGX B200)", .vendor = "NVIDIA",
     .backend = Backend::cuda, .family = Family::gpu, .architecture = "Blackwell", .compute_capability = "10.0",
     .memory_bytes = 180 * GiB, .memory_bandwidth_gbps = 8000, .bf16_tflops = 2250, .fp16_tflops = 2250,
     .fp8_tflops = 4500, .int8_tops = 4500, .fabric = nvlink5_nvswitch, .pcie_generation = 5, .pcie_width = 16,
     .tdp_watts = 1000, .pci_vendor_id = nvidia, .match = "b200",
     .source = "NVIDIA DGX B200 datasheet, https://www.nvidia.com/en-us/data-center/dgx-b200/",
     .notes = "per-GPU figures are the 8-GPU system figures divided by 8, sparse figures halved"},
    {.id = "h200-sxm-141gb", .name = "H200-SXM-141GB", .product = "NVIDIA H200 SXM 141GB", .vendor = "NVIDIA",
     .architecture = "Hopper", .compute_capability = "9.0", .memory_bytes = 141 * GiB,
     .memory_bandwidth_gbps = 4800, .fp32_tflops = 67, .bf16_tflops = 989.4, .fp16_tflops = 989.4,
     .fp8_tflops = 1978.9, .int8_tops = 1978.9, .fabric = nvlink4_nvswitch, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 700, .pci_vendor_id = nvidia, .pci_device_ids = {0x2335}, .match = "h200 !nvl",
     .source = "NVIDIA H200 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h200/"},
    {.id = "h200-nvl-141gb", .name = "H200-NVL-141GB", .product = "NVIDIA H200 NVL", .vendor = "NVIDIA",
     .architecture = "Hopper", .compute_capability = "9.0", .memory_bytes = 141 * GiB,
     .memory_bandwidth_gbps = 4800, .fp32_tflops = 60, .bf16_tflops = 835.5, .fp16_tflops = 835.5,
     .fp8_tflops = 1670.5, .int8_tops = 1670.5,
     .fabric = FabricSpec{"nvlink", "NVLink bridge (900 GB/s bidirectional)", 450.0, 2}, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 600, .pci_vendor_id = nvidia, .match = "h200 nvl",
     .source = "NVIDIA H200 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h200/",
     .notes = "bridged in pairs or fours; a bridged pair is assumed"},
    {.id = "h100-sxm5-80gb", .name = "H100-SXM-80GB", .product = "NVIDIA H100 SXM5 80GB", .vendor = "NVIDIA",
     .architecture = "Hopper", .compute_capability = "9.0", .memory_bytes = 80 * GiB,
     .memory_bandwidth_gbps = 3350, .fp32_tflops = 67, .bf16_tflops = 989.4, .fp16_tflops = 989.4,
     .fp8_tflops = 1978.9, .int8_tops = 1978.9, .fabric = nvlink4_nvswitch, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 700, .pci_vendor_id = nvidia, .pci_device_ids = {0x2330},
     .match = "h100 !pcie !nvl",
     .source = "NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/"},
    {.id = "h100-pcie-80gb", .name = "H100-PCIe-80GB", .product = "NVIDIA H100 PCIe 80GB", .vendor = "NVIDIA",
     .architecture = "Hopper", .compute_capability = "9.0", .memory_bytes = 80 * GiB,
     .memory_bandwidth_gbps = 2000, .fp32_tflops = 51, .bf16_tflops = 756.5, .fp16_tflops = 756.5,
     .fp8_tflops = 1513, .int8_tops = 1513, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 350,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x2331}, .match = "h100 pcie",
     .source = "NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/",
     .notes = "an NVLink bridge is optional for this card and is not assumed"},
    {.id = "h100-nvl-94gb", .name = "H100-NVL-94GB", .product = "NVIDIA H100 NVL", .vendor = "NVIDIA",
     .architecture = "Hopper", .compute_capability = "9.0", .memory_bytes = 94 * GiB,
     .memory_bandwidth_gbps = 3900, .fp32_tflops = 60, .bf16_tflops = 835.5, .fp16_tflops = 835.5,
     .fp8_tflops = 1670.5, .int8_tops = 1670.5,
     .fabric = FabricSpec{"nvlink", "NVLink bridge (600 GB/s bidirectional)", 300.0, 2}, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 400, .pci_vendor_id = nvidia, .pci_device_ids = {0x2321}, .match = "h100 nvl",
     .source = "NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/"},
    {.id = "a100-sxm4-80gb", .name = "A100-SXM-80GB", .product = "NVIDIA A100 SXM4 80GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.0", .memory_bytes = 80 * GiB,
     .memory_bandwidth_gbps = 2039, .fp32_tflops = 19.5, .bf16_tflops = 312, .fp16_tflops = 312, .int8_tops = 624,
     .fabric = nvlink3_nvswitch, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 400,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x20b2}, .match = "a100 sxm*",
     .source = "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/a100/"},
    {.id = "a100-sxm4-40gb", .name = "A100-SXM-40GB", .product = "NVIDIA A100 SXM4 40GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.0", .memory_bytes = 40 * GiB,
     .memory_bandwidth_gbps = 1555, .fp32_tflops = 19.5, .bf16_tflops = 312, .fp16_tflops = 312, .int8_tops = 624,
     .fabric = nvlink3_nvswitch, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 400,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x20b0}, .match = "a100 sxm*",
     .source = "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/a100/"},
    {.id = "a100-pcie-80gb", .name = "A100-PCIe-80GB", .product = "NVIDIA A100 PCIe 80GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.0", .memory_bytes = 80 * GiB,
     .memory_bandwidth_gbps = 1935, .fp32_tflops = 19.5, .bf16_tflops = 312, .fp16_tflops = 312, .int8_tops = 624,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x20b5}, .match = "a100 pcie",
     .source = "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/a100/",
     .notes = "an NVLink bridge is optional for this card and is not assumed"},
    {.id = "a100-pcie-40gb", .name = "A100-PCIe-40GB", .product = "NVIDIA A100 PCIe 40GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.0", .memory_bytes = 40 * GiB,
     .memory_bandwidth_gbps = 1555, .fp32_tflops = 19.5, .bf16_tflops = 312, .fp16_tflops = 312, .int8_tops = 624,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 250, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x20f1}, .match = "a100 pcie",
     .source = "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/a100/",
     .notes = "an NVLink bridge is optional for this card and is not assumed"},
    {.id = "l40s-48gb", .name = "L40S-48GB", .product = "NVIDIA L40S", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 48 * GiB,
     .memory_bandwidth_gbps = 864, .fp32_tflops = 91.6, .bf16_tflops = 362.05, .fp16_tflops = 362.05,
     .fp8_tflops = 733, .int8_tops = 733, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 350,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x26b9}, .match = "l40s",
     .source = "NVIDIA L40S datasheet, https://www.nvidia.com/en-us/data-center/l40s/"},
    {.id = "l40-48gb", .name = "L40-48GB", .product = "NVIDIA L40", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 48 * GiB,
     .memory_bandwidth_gbps = 864, .fp32_tflops = 90.5, .bf16_tflops = 181.05, .fp16_tflops = 181.05,
     .fp8_tflops = 362, .int8_tops = 362, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 300,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x26b5}, .match = "l40",
     .source = "NVIDIA L40 datasheet, https://www.nvidia.com/en-us/data-center/l40/"},
    {.id = "l4-24gb", .name = "L4-24GB", .product = "NVIDIA L4", .vendor = "NVIDIA", .architecture = "Ada Lovelace",
     .compute_capability = "8.9", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 300, .fp32_tflops = 30.3,
     .bf16_tflops = 121, .fp16_tflops = 121, .fp8_tflops = 242.5, .int8_tops = 242.5, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 72, .pci_vendor_id = nvidia, .pci_device_ids = {0x27b8}, .match = "l4",
     .source = "NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/"},
    {.id = "rtx-4090-24gb", .name = "RTX-4090", .product = "NVIDIA GeForce RTX 4090", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 24 * GiB,
     .memory_bandwidth_gbps = 1008, .fp32_tflops = 82.6, .bf16_tflops = 165.2, .fp16_tflops = 165.2,
     .fp8_tflops = 330.3, .int8_tops = 660.6, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 450,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x2684}, .match = "rtx 4090 !d",
     .source = "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix A (GeForce RTX 4090)",
     .notes = "tensor figures with FP32 accumulate (GeForce runs FP16-accumulate at twice the rate); no NVLink, "
              "and peer-to-peer over PCIe is disabled on GeForce"},
    {.id = "rtx-3090-24gb", .name = "RTX-3090", .product = "NVIDIA GeForce RTX 3090", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 936,
     .fp32_tflops = 35.6, .bf16_tflops = 71, .fp16_tflops = 71, .int8_tops = 284, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 350, .pci_vendor_id = nvidia, .pci_device_ids = {0x2204},
     .match = "rtx 3090 !ti",
     .source = "NVIDIA Ampere GA102 GPU architecture whitepaper (GeForce RTX 3090)",
     .notes = "tensor figures with FP32 accumulate; an NVLink bridge (112.5 GB/s) is optional and not assumed"},
    {.id = "rtx-5090-32gb", .name = "RTX-5090", .product = "NVIDIA GeForce RTX 5090", .vendor = "NVIDIA",
     .architecture = "Blackwell", .compute_capability = "12.0", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 1792, .fp32_tflops = 104.8, .bf16_tflops = 209.5, .fp16_tflops = 209.5,
     .fp8_tflops = 419, .int8_tops = 838, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 575,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x2b85}, .match = "rtx 5090 !d",
     .source = "NVIDIA RTX Blackwell GPU architecture whitepaper v1.1, appendix A (GeForce RTX 5090), "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate; INT8 at 170 SMs x 2048 ops per clock x 2.407 GHz boost; "
              "no NVLink"},
    {.id = "rtx-4080-16gb", .name = "RTX-4080", .product = "NVIDIA GeForce RTX 4080", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 716.8, .fp32_tflops = 48.7, .bf16_tflops = 97.5, .fp16_tflops = 97.5,
     .fp8_tflops = 194.9, .int8_tops = 389.9, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 320,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x2704}, .match = "rtx 4080 !super",
     .source = "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix A (GeForce RTX 4080 16GB)",
     .notes = "tensor figures dense with FP32 accumulate (76 SMs at 2.505 GHz boost, the RTX 4090's per-SM rates); "
              "no NVLink"},
    {.id = "rtx-3060-12gb", .name = "RTX-3060", .product = "NVIDIA GeForce RTX 3060 12GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 12 * GiB, .memory_bandwidth_gbps = 360,
     .fp32_tflops = 12.74, .bf16_tflops = 25.5, .fp16_tflops = 25.5, .int8_tops = 101.9, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 170, .pci_vendor_id = nvidia, .pci_device_ids = {0x2503, 0x2504, 0x2544},
     .match = "rtx 3060 !ti",
     .source = "NVIDIA GeForce RTX 3060 family specifications, https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3060-3060ti/",
     .notes = "tensor figures dense with FP32 accumulate, from 28 SMs at 1.777 GHz boost at the GA102 whitepaper's "
              "GeForce per-SM rates (half rate with FP32 accumulate); the 8 GB model has 240 GB/s and does not match"},
    {.id = "rtx-a6000-48gb", .name = "RTX-A6000", .product = "NVIDIA RTX A6000", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 48 * GiB, .memory_bandwidth_gbps = 768,
     .fp32_tflops = 38.7, .bf16_tflops = 154.8, .fp16_tflops = 154.8, .int8_tops = 309.7, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = nvidia, .pci_device_ids = {0x2230}, .match = "rtx a6000",
     .source = "NVIDIA RTX A6000 datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-a6000/",
     .notes = "tensor figures dense with FP32 accumulate (full rate on workstation parts); a 2-way NVLink bridge "
              "(112.5 GB/s bidirectional) is optional and not assumed"},
    {.id = "rtx-6000-ada-48gb", .name = "RTX-6000-Ada", .product = "NVIDIA RTX 6000 Ada Generation", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 48 * GiB,
     .memory_bandwidth_gbps = 960, .fp32_tflops = 91.1, .bf16_tflops = 364.2, .fp16_tflops = 364.2,
     .fp8_tflops = 728.5, .int8_tops = 728.5, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 300,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x26b1}, .match = "rtx 6000 ada",
     .source = "NVIDIA RTX 6000 Ada Generation datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-6000/",
     .notes = "tensor figures dense with FP32 accumulate: half the datasheet's sparse FP8 (1457 TFLOPS), and 142 SMs "
              "at 2.505 GHz at full-rate FP16 for BF16/FP16; no NVLink"},
    {.id = "a10-24gb", .name = "A10-24GB", .product = "NVIDIA A10", .vendor = "NVIDIA", .architecture = "Ampere",
     .compute_capability = "8.6", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 600, .fp32_tflops = 31.2,
     .bf16_tflops = 125, .fp16_tflops = 125, .int8_tops = 250, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 150, .pci_vendor_id = nvidia, .pci_device_ids = {0x2236}, .match = "a10",
     .source = "NVIDIA A10 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/products/a10-gpu/"},
    {.id = "a10g-24gb", .name = "A10G-24GB", .product = "NVIDIA A10G (Amazon EC2 G5)", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 600,
     .pcie_generation = 4, .pcie_width = 16, .pci_vendor_id = nvidia, .pci_device_ids = {0x2237},
     .match = "a10g", .source = "Amazon EC2 G5 instances, https://aws.amazon.com/ec2/instance-types/g5/",
     .notes = "NVIDIA publishes no A10G datasheet: compute peaks are left empty"},
    {.id = "t4-16gb", .name = "T4-16GB", .product = "NVIDIA T4", .vendor = "NVIDIA", .architecture = "Turing",
     .compute_capability = "7.5", .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 320, .fp32_tflops = 8.1,
     .fp16_tflops = 65, .int8_tops = 130, .pcie_generation = 3, .pcie_width = 16, .tdp_watts = 70,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x1eb8}, .match = "t4",
     .source = "NVIDIA T4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/tesla-t4/",
     .notes = "no bf16 or fp8 arithmetic"},
    {.id = "v100-sxm2-32gb", .name = "V100-SXM2-32GB", .product = "NVIDIA V100 SXM2 32GB", .vendor = "NVIDIA",
     .architecture = "Volta", .compute_capability = "7.0", .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 900,
     .fp32_tflops = 15.7, .fp16_tflops = 125, .fabric = nvlink2_mesh, .pcie_generation = 3, .pcie_width = 16,
     .tdp_watts = 300, .pci_vendor_id = nvidia, .pci_device_ids = {0x1db5}, .match = "v100 sxm*",
     .source = "NVIDIA V100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/v100/",
     .notes = "no bf16 arithmetic; 8-GPU systems are a hybrid cube-mesh, not every pair has a direct link"},
    {.id = "v100-sxm2-16gb", .name = "V100-SXM2-16GB", .product = "NVIDIA V100 SXM2 16GB", .vendor = "NVIDIA",
     .architecture = "Volta", .compute_capability = "7.0", .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 900,
     .fp32_tflops = 15.7, .fp16_tflops = 125, .fabric = nvlink2_mesh, .pcie_generation = 3, .pcie_width = 16,
     .tdp_watts = 300, .pci_vendor_id = nvidia, .pci_device_ids = {0x1db1}, .match = "v100 sxm*",
     .source = "NVIDIA V100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/v100/",
     .notes = "no bf16 arithmetic"},
    {.id = "v100-pcie-32gb", .name = "V100-PCIe-32GB", .product = "NVIDIA V100 PCIe 32GB", .vendor = "NVIDIA",
     .architecture = "Volta", .compute_capability = "7.0", .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 900,
     .fp32_tflops = 14, .fp16_tflops = 112, .pcie_generation = 3, .pcie_width = 16, .tdp_watts = 250,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x1db6}, .match = "v100 pcie",
     .source = "NVIDIA V100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/v100/",
     .notes = "no bf16 arithmetic"},
    {.id = "v100-pcie-16gb", .name = "V100-PCIe-16GB", .product = "NVIDIA V100 PCIe 16GB", .vendor = "NVIDIA",
     .architecture = "Volta", .compute_capability = "7.0", .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 900,
     .fp32_tflops = 14, .fp16_tflops = 112, .pcie_generation = 3, .pcie_width = 16, .tdp_watts = 250,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x1db4}, .match = "v100 pcie",
     .source = "NVIDIA V100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/v100/",
     .notes = "no bf16 arithmetic"},
    // --- AMD ------------------------------------------------------------------
    {.id = "mi325x-256gb", .name = "MI325X-256GB", .product = "AMD Instinct MI325X", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA3", .compute_capability = "gfx942", .memory_bytes = 256 * GiB,
     .memory_bandwidth_gbps = 6000, .fp32_tflops = 163.4, .bf16_tflops = 1307.4, .fp16_tflops = 1307.4,
     .fp8_tflops = 2614.9, .int8_tops = 2614.9, .fabric = mi300_xgmi, .pcie_generation = 5, .pcie_width = 16,
     .tdp_watts = 1000, .pci_vendor_id = amd, .pci_device_ids = {0x74a5}, .match = "mi325x",
     .source = "AMD Instinct MI325X accelerator datasheet, "
               "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html"},
    {.id = "mi300x-192gb", .name = "MI300X-192GB", .product = "AMD Instinct MI300X", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA3", .compute_capability = "gfx942", .memory_bytes = 192 * GiB,
     .memory_bandwidth_gbps = 5300, .fp32_tflops = 163.4, .bf16_tflops = 1307.4, .fp16_tflops = 1307.4,
     .fp8_tflops = 2614.9, .int8_tops = 2614.9, .fabric = mi300_xgmi, .pcie_generation = 5, .pcie_width = 16,
     .tdp_watts = 750, .pci_vendor_id = amd, .pci_device_ids = {0x74a1}, .match = "mi300x",
     .source = "AMD Instinct MI300X accelerator datasheet, "
               "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"},
    {.id = "mi250x-gcd-64gb", .name = "MI250X", .product = "AMD Instinct MI250X (one GCD)", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA2", .compute_capability = "gfx90a", .memory_bytes = 64 * GiB,
     .memory_bandwidth_gbps = 1638.4, .fp32_tflops = 23.95, .bf16_tflops = 191.5, .fp16_tflops = 191.5,
     .int8_tops = 191.5,
     .fabric = FabricSpec{"xgmi", "Infinity Fabric (800 GB/s aggregate per module)", 200.0, 8},
     .pcie_generation = 4, .pcie_width = 16, .pci_vendor_id = amd, .pci_device_ids = {0x740c}, .match = "mi250x",
     .devices_per_package = 2,
     .source = "AMD Instinct MI250X accelerator datasheet, "
               "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html",
     .notes = "figures per GCD: the module (128 GB, 3.2768 TB/s, 383 TFLOPS fp16/bf16, 560 W) is two devices; "
              "fabric bandwidth is the module's 800 GB/s bidirectional aggregate shared by its two GCDs"},
    {.id = "mi210-64gb", .name = "MI210-64GB", .product = "AMD Instinct MI210", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA2", .compute_capability = "gfx90a", .memory_bytes = 64 * GiB,
     .memory_bandwidth_gbps = 1638.4, .fp32_tflops = 22.6, .bf16_tflops = 181, .fp16_tflops = 181,
     .int8_tops = 181, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = amd,
     .pci_device_ids = {0x740f}, .match = "mi210",
     .source = "AMD Instinct MI210 accelerator datasheet, "
               "https://www.amd.com/en/products/accelerators/instinct/mi200/mi210.html",
     .notes = "an Infinity Fabric bridge is optional and not assumed"},
    // --- Intel Gaudi -------------------------------------------------------------
    {.id = "gaudi3-128gb", .name = "Gaudi3-128GB", .product = "Intel Gaudi 3 (HL-325L OAM)", .vendor = "Intel",
     .backend = Backend::gaudi, .family = Family::asic, .architecture = "Gaudi 3", .memory_bytes = 128 * GiB,
     .memory_bandwidth_gbps = 3700, .bf16_tflops = 1835, .fp8_tflops = 1835,
     .fabric = FabricSpec{"roce", "21 of 24 on-chip 200 GbE RoCE ports for scale-up", 525.0, 8},
     .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 900, .pci_vendor_id = habana,
     .match = "gaudi3|gaudi 3|hl 325*",
     .source = "Intel Gaudi 3 AI accelerator white paper, "
               "https://www.intel.com/content/www/us/en/content-details/817486/intel-gaudi-3-ai-accelerator-white-paper.html",
     .notes = "matrix-engine (MME) peaks"},
    {.id = "gaudi2-96gb", .name = "Gaudi2-96GB", .product = "Intel Gaudi 2 (HL-225H OAM)", .vendor = "Intel",
     .backend = Backend::gaudi, .family = Family::asic, .architecture = "Gaudi 2", .memory_bytes = 96 * GiB,
     .memory_bandwidth_gbps = 2450, .bf16_tflops = 432, .fp8_tflops = 865,
     .fabric = FabricSpec{"roce", "21 of 24 on-chip 100 GbE RoCE ports for scale-up", 262.5, 8},
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 600, .pci_vendor_id = habana,
     .pci_device_ids = {0x1020}, .match = "gaudi2|gaudi 2|hl 225*",
     .source = "Habana Gaudi2 white paper (2022); MME peaks from the Gaudi 2 column of the Intel Gaudi 3 white paper",
     .notes = "matrix-engine (MME) peaks"},
    // --- Google TPU ----------------------------------------------------------------
    {.id = "tpu-v6e", .name = "TPU-v6e", .product = "Google Cloud TPU v6e (Trillium)", .vendor = "Google",
     .backend = Backend::tpu, .family = Family::tpu, .architecture = "TPU v6e", .compute_capability = "v6e",
     .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 1640, .bf16_tflops = 918, .int8_tops = 1836,
     .fabric = FabricSpec{"ici", "ICI, 4 ports, 2D torus (800 GB/s bidirectional per chip)", 400.0, 256},
     .match = "v6e|trillium", .source = "Cloud TPU v6e documentation, https://cloud.google.com/tpu/docs/v6e"},
    {.id = "tpu-v5p", .name = "TPU-v5p", .product = "Google Cloud TPU v5p", .vendor = "Google",
     .backend = Backend::tpu, .family = Family::tpu, .architecture = "TPU v5p", .compute_capability = "v5p",
     .memory_bytes = 95 * GiB, .memory_bandwidth_gbps = 2765, .bf16_tflops = 459, .fp8_tflops = 459,
     .int8_tops = 918,
     .fabric = FabricSpec{"ici", "ICI, 3D torus (4800 Gbps per chip per direction)", 600.0, 8960},
     .match = "v5p", .source = "Cloud TPU v5p documentation, https://cloud.google.com/tpu/docs/v5p"},
    {.id = "tpu-v5e", .name = "TPU-v5e", .product = "Google Cloud TPU v5e", .vendor = "Google",
     .backend = Backend::tpu, .family = Family::tpu, .architecture = "TPU v5e", .compute_capability = "v5e",
     .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 819, .bf16_tflops = 197, .int8_tops = 394,
     .fabric = FabricSpec{"ici", "ICI, 4 ports, 2D torus (400 GB/s bidirectional per chip)", 200.0, 256},
     .match = "v5e|v5litepod|v5lite*|v5 lite*",
     .source = "Cloud TPU v5e documentation, https://cloud.google.com/tpu/docs/v5e"},
    {.id = "tpu-v4", .name = "TPU-v4", .product = "Google Cloud TPU v4", .vendor = "Google",
     .backend = Backend::tpu, .family = Family::tpu, .architecture = "TPU v4", .compute_capability = "v4",
     .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 1200, .bf16_tflops = 275, .int8_tops = 275,
     .fabric = FabricSpec{"ici", "ICI, 3D torus", std::nullopt, 4096}, .match = "v4",
     .source = "Cloud TPU v4 documentation, https://cloud.google.com/tpu/docs/v4",
     .notes = "per-chip ICI bandwidth is not published on the product page"},
    // --- AWS Neuron -------------------------------------------------------------------
    {.id = "trainium2-96gb", .name = "Trainium2", .product = "AWS Trainium2", .vendor = "AWS",
     .backend = Backend::aws_neuron, .family = Family::asic, .architecture = "NeuronCore-v3",
     .memory_bytes = 96 * GiB, .memory_bandwidth_gbps = 2900, .fp32_tflops = 181, .bf16_tflops = 667,
     .fp16_tflops = 667, .fp8_tflops = 1299,
     .fabric = FabricSpec{"neuronlink", "NeuronLink-v3 (4 links)", std::nullopt, 16}, .match = "trainium2|trn2",
     .source = "AWS Neuron documentation, Trainium2 architecture, "
               "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware/trainium2.html"},
    {.id = "trainium-32gb", .name = "Trainium", .product = "AWS Trainium", .vendor = "AWS",
     .backend = Backend::aws_neuron, .family = Family::asic, .architecture = "NeuronCore-v2",
     .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 820, .fp32_tflops = 47.5, .bf16_tflops = 190,
     .fp16_tflops = 190, .fp8_tflops = 190, .int8_tops = 380,
     .fabric = FabricSpec{"neuronlink", "NeuronLink-v2 (4 links, 4D hypercube)", std::nullopt, 16},
     .match = "trainium|trn1",
     .source = "AWS Neuron documentation, Trainium architecture, "
               "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trainium.html"},
    {.id = "inferentia2-32gb", .name = "Inferentia2", .product = "AWS Inferentia2", .vendor = "AWS",
     .backend = Backend::aws_neuron, .family = Family::asic, .architecture = "NeuronCore-v2",
     .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 820, .fp32_tflops = 47.5, .bf16_tflops = 190,
     .fp16_tflops = 190, .fp8_tflops = 190, .int8_tops = 380,
     .fabric = FabricSpec{"neuronlink", "NeuronLink-v2 (2 links, ring)", std::nullopt, 12},
     .match = "inferentia2|inf2",
     .source = "AWS Neuron documentation, Inferentia2 architecture, "
               "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia2.html"},
    // --- Apple (unified memory; GPU figures) --------------------------------------------
    {.id = "apple-m1", .name = "M1", .product = "Apple M1 (8-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 16 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 68.25, .fp32_tflops = 2.6, .fp16_tflops = 2.6,
     .match = "m1 !pro !max !ultra", .memory_options_gib = {8, 16},
     .source = "Apple newsroom, Apple unleashes M1 (2020-11-10)",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; the M1 GPU has no bf16 arithmetic"},
    {.id = "apple-m1-pro", .name = "M1-Pro", .product = "Apple M1 Pro (16-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 5.2, .fp16_tflops = 5.2,
     .match = "m1 pro", .memory_options_gib = {16, 32},
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18)",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; no bf16 arithmetic"},
    {.id = "apple-m1-max", .name = "M1-Max", .product = "Apple M1 Max (32-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 10.4, .fp16_tflops = 10.4,
     .match = "m1 max", .memory_options_gib = {32, 64},
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18)",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; no bf16 arithmetic"},
    {.id = "apple-m1-ultra", .name = "M1-Ultra", .product = "Apple M1 Ultra (64-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 21, .fp16_tflops = 21,
     .match = "m1 ultra", .memory_options_gib = {64, 128},
     .source = "Apple newsroom, Apple unveils M1 Ultra (2022-03-08)",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; no bf16 arithmetic"},
    {.id = "apple-m2", .name = "M2", .product = "Apple M2 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .fp32_tflops = 3.6, .bf16_tflops = 3.6,
     .fp16_tflops = 3.6, .match = "m2 !pro !max !ultra", .memory_options_gib = {8, 16, 24},
     .source = "Apple newsroom, Apple unveils M2 (2022-06-06)",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m2-pro", .name = "M2-Pro", .product = "Apple M2 Pro (19-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 6.8, .bf16_tflops = 6.8,
     .fp16_tflops = 6.8, .match = "m2 pro", .memory_options_gib = {16, 32},
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17)",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m2-max", .name = "M2-Max", .product = "Apple M2 Max (38-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 96 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 13.6, .bf16_tflops = 13.6,
     .fp16_tflops = 13.6, .match = "m2 max", .memory_options_gib = {32, 64, 96},
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17)",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m2-ultra", .name = "M2-Ultra", .product = "Apple M2 Ultra (76-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 192 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 27.2, .bf16_tflops = 27.2,
     .fp16_tflops = 27.2, .match = "m2 ultra", .memory_options_gib = {64, 128, 192},
     .source = "Apple newsroom, Apple introduces M2 Ultra (2023-06-05)",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m3", .name = "M3", .product = "Apple M3 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .match = "m3 !pro !max !ultra",
     .memory_options_gib = {8, 16, 24}, .source = "Apple MacBook Pro (M3, 2023) technical specifications",
     .notes = "Apple publishes no TFLOPS figure for the M3 family"},
    {.id = "apple-m3-pro", .name = "M3-Pro", .product = "Apple M3 Pro (18-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 36 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 150, .match = "m3 pro",
     .memory_options_gib = {18, 36}, .source = "Apple MacBook Pro (M3 Pro, 2023) technical specifications",
     .notes = "Apple publishes no TFLOPS figure for the M3 family"},
    {.id = "apple-m3-max", .name = "M3-Max", .product = "Apple M3 Max (40-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .match = "m3 max",
     .memory_options_gib = {36, 48, 64, 96, 128},
     .source = "Apple MacBook Pro (M3 Max, 2023) technical specifications",
     .notes = "the 40-core GPU part; the 30-core part has 300 GB/s; no published TFLOPS"},
    {.id = "apple-m3-ultra", .name = "M3-Ultra", .product = "Apple M3 Ultra (80-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 512 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 819, .match = "m3 ultra",
     .memory_options_gib = {96, 256, 512}, .source = "Apple newsroom, Apple unveils new Mac Studio (2025-03-05)",
     .notes = "Apple publishes no TFLOPS figure for the M3 family"},
    {.id = "apple-m4", .name = "M4", .product = "Apple M4 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 120, .match = "m4 !pro !max !ultra",
     .memory_options_gib = {16, 24, 32}, .source = "Apple newsroom, Apple introduces M4 chip (2024-05-07)",
     .notes = "Apple publishes no TFLOPS figure for the M4 family"},
    {.id = "apple-m4-pro", .name = "M4-Pro", .product = "Apple M4 Pro (20-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 273, .match = "m4 pro",
     .memory_options_gib = {24, 48, 64},
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30)",
     .notes = "Apple publishes no TFLOPS figure for the M4 family"},
    {.id = "apple-m4-max", .name = "M4-Max", .product = "Apple M4 Max (40-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 546, .match = "m4 max",
     .memory_options_gib = {36, 48, 64, 128},
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30)",
     .notes = "the 40-core GPU part; the 32-core part has 410 GB/s; no published TFLOPS"},
}};
#pragma clang diagnostic pop

// Lower-case words of a device name: "NVIDIA A100-SXM4-80GB" -> nvidia a100 sxm4 80gb.
std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> words;
  std::string current;
  for (char c : s) {
    const char l = text::to_lower(c);
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) {
      current.push_back(l);
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

bool has_word(const std::vector<std::string>& words, std::string_view token) {
  const bool prefix = !token.empty() && token.back() == '*';
  if (prefix) token.remove_suffix(1);
  for (const auto& w : words)
    if (prefix ? std::string_view(w).substr(0, token.size()) == token : w == token) return true;
  return false;
}

// Number of positive tokens of the best alternative of `pattern` that
// `words` satisfy; 0 when none does.
std::size_t pattern_score(std::string_view pattern, const std::vector<std::string>& words) {
  std::size_t best = 0;
  while (!pattern.empty()) {
    std::string_view alternative = text::next_token(pattern, '|');
    std::size_t score = 0;
    bool ok = true;
    for (auto token : text::words(alternative)) {
      if (token.front() == '!') {
        if (has_word(words, token.substr(1))) ok = false;
      } else if (has_word(words, token)) {
        ++score;
      } else {
        ok = false;
      }
    }
    if (ok && score > best) best = score;
  }
  return best;
}

bool backend_compatible(const DeviceSpec& spec, const SpecQuery& q) {
  if (q.family && spec.family != *q.family) return false;
  const Backend backend = q.backend;
  if (spec.backend == backend) return true;
  // Vulkan sees the same discrete GPUs the vendor stacks do.
  return backend == Backend::vulkan && spec.family == Family::gpu && spec.backend != Backend::apple;
}

bool has_pci_id(const DeviceSpec& spec, std::uint16_t vendor, std::uint16_t device) {
  if (spec.pci_vendor_id != vendor) return false;
  for (auto id : spec.pci_device_ids)
    if (id != 0 && id == device) return true;
  return false;
}

// Memory ratio the detected size must fall in: runtimes report a little less
// than the datasheet (ECC, firmware reservations: a 16 GB T4 shows 15 GiB).
constexpr double min_memory_ratio = 0.85;
constexpr double max_memory_ratio = 1.03;

std::optional<double> memory_ratio(const DeviceSpec& spec, std::optional<std::uint64_t> memory) {
  if (!memory || spec.memory_kind == MemoryKind::unified || spec.memory_bytes == 0) return std::nullopt;
  return static_cast<double>(*memory) / static_cast<double>(spec.memory_bytes);
}

bool memory_plausible(const DeviceSpec& spec, std::optional<std::uint64_t> memory) {
  const auto r = memory_ratio(spec, memory);
  return !r || (*r >= min_memory_ratio && *r <= max_memory_ratio);
}

std::optional<std::uint16_t> id_property(const DeviceProfile& d, std::string_view key) {
  const auto it = d.properties.find(key);
  if (it == d.properties.end()) return std::nullopt;
  const auto v = text::parse_hex(it->second);
  if (!v || *v > 0xffff) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

}  // namespace

std::optional<double> DeviceSpec::peak_tflops(ComputeType type) const noexcept {
  switch (type) {
    case ComputeType::fp32: return fp32_tflops;
    case ComputeType::bf16: return bf16_tflops;
    case ComputeType::fp16: return fp16_tflops;
    case ComputeType::fp8: return fp8_tflops;
    case ComputeType::int8: return int8_tops;
  }
  return std::nullopt;
}

std::optional<double> DeviceSpec::host_link_gbps() const noexcept {
  if (pcie_generation == 0 || pcie_width == 0) return std::nullopt;
  constexpr double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  if (pcie_generation > std::size(rates)) return std::nullopt;
  PcieLink link;
  link.max_speed_gts = rates[pcie_generation - 1];
  link.max_width = pcie_width;
  return link.max_bandwidth_gbps();
}

std::span<const DeviceSpec> device_specs() noexcept { return specs; }

const DeviceSpec* find_spec(std::string_view key) noexcept {
  key = text::trim(key);
  if (key.empty()) return nullptr;
  for (const auto& s : specs)  // ids as stored in DeviceProfile::spec_id: the common case
    if (s.id == key) return &s;
  for (const auto& s : specs)
    if (text::same_identifier(s.id, key) || text::same_identifier(s.name, key)) return &s;
  return nullptr;
}

const DeviceSpec* match_spec(const SpecQuery& q) noexcept {
  std::vector<const DeviceSpec*> candidates;
  if (q.pci_vendor_id && q.pci_device_id) {
    for (const auto& s : specs)
      if (backend_compatible(s, q) && has_pci_id(s, *q.pci_vendor_id, *q.pci_device_id) &&
          memory_plausible(s, q.memory_bytes))
        candidates.push_back(&s);
    if (candidates.size() == 1) return candidates.front();
  }
  const auto words = words_of(text::cat(q.name, ' ', q.compute_capability));
  std::vector<std::pair<const DeviceSpec*, std::size_t>> scored;
  const auto consider = [&](const DeviceSpec& s) {
    if (!backend_compatible(s, q) || !memory_plausible(s, q.memory_bytes)) return;
    if (const auto score = pattern_score(s.match, words); score > 0) scored.emplace_back(&s, score);
  };
  if (!candidates.empty()) {
    for (const auto* s : candidates) consider(*s);
  } else {
    for (const auto& s : specs) consider(s);
  }
  if (scored.empty()) return nullptr;
  std::size_t best_score = 0;
  for (const auto& [s, score] : scored) best_score = std::max(best_score, score);
  const DeviceSpec* best = nullptr;
  double best_distance = 0;
  bool ambiguous = false;
  for (const auto& [s, score] : scored) {
    if (score != best_score) continue;
    const auto r = memory_ratio(*s, q.memory_bytes);
    // Without a detected size, entries that differ only in memory cannot be told apart.
    const double distance = r ? std::abs(1.0 - *r) : 0.0;
    if (!best || distance < best_distance - 1e-9) {
      best = s;
      best_distance = distance;
      ambiguous = false;
    } else if (std::abs(distance - best_distance) <= 1e-9) {
      ambiguous = true;
    }
  }
  return ambiguous ? nullptr : best;
}

SpecQuery spec_query_of(const DeviceProfile& d) noexcept {
  SpecQuery q;
  q.backend = d.backend;
  q.family = d.family;
  q.name = d.name;
  if (d.compute_capability) q.compute_capability = *d.compute_capability;
  q.memory_bytes = d.memory_bytes;
  q.pci_vendor_id = id_property(d, "pci_vendor_id");
  q.pci_device_id = id_property(d, "pci_device_id");
  return q;
}

const DeviceSpec* match_spec(const DeviceProfile& d) noexcept {
  if (d.family == Family::cpu) return nullptr;
  return match_spec(spec_query_of(d));
}

DeviceTraits traits_of(const DeviceSpec& s) noexcept {
  DeviceTraits t;
  t.backend = s.backend;
  t.family = s.family;
  t.name = s.product;
  t.compute_capability = s.compute_capability;
  t.architecture = s.architecture;
  return t;
}

std::string device_specs_json() {
  json::Writer w(false);
  w.begin_array();
  for (const auto& s : device_specs()) {
    w.begin_object();
    w.field("id", s.id).field("name", s.name).field("product", s.product).field("vendor", s.vendor);
    w.field("backend", to_string(s.backend)).field("family", to_string(s.family));
    w.field("architecture", s.architecture);
    if (!s.compute_capability.empty()) w.field("compute_capability", s.compute_capability);
    w.field("memory_bytes", s.memory_bytes).field("memory_kind", to_string(s.memory_kind));
    w.field("memory_bandwidth_gbps", s.memory_bandwidth_gbps);
    w.field("fp32_tflops", s.fp32_tflops).field("bf16_tflops", s.bf16_tflops).field("fp16_tflops", s.fp16_tflops);
    w.field("fp8_tflops", s.fp8_tflops).field("int8_tops", s.int8_tops);
    if (s.fabric) {
      w.key("fabric").begin_object();
      w.field("kind", s.fabric->kind).field("name", s.fabric->name).field("bandwidth_gbps", s.fabric->bandwidth_gbps);
      w.field("domain_size", s.fabric->domain_size);
      w.end_object();
    }
    w.field("devices_per_package", s.devices_per_package);
    w.field("source", s.source);
    if (!s.notes.empty()) w.field("notes", s.notes);
    w.end_object();
  }
  w.end_array();
  return std::string(w.str());
}

}  // namespace hwaccel
