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

constexpr std::uint64_t GiB = text::bytes_per_gib;
constexpr std::uint16_t nvidia = 0x10de;
constexpr std::uint16_t amd = 0x1002;
constexpr std::uint16_t habana = 0x1da3;
constexpr std::uint16_t intel = 0x8086;

// The pattern of entries chosen only by name (`--devices M3-Max-30c`): no detected
// name satisfies it, since a name's words never hold '(' or '-'.
constexpr std::string_view by_name_only = "(by-name-only)";

constexpr FabricSpec nvlink4_nvswitch{"nvlink", "NVLink 4 through NVSwitch (900 GB/s bidirectional)", 450.0, 8};
constexpr FabricSpec nvlink5_nvswitch{"nvlink", "NVLink 5 through NVSwitch (1.8 TB/s bidirectional)", 900.0, 8};
constexpr FabricSpec nvlink5_nvl72{"nvlink", "NVLink 5 through NVSwitch trays, one 72-GPU NVL72 domain (1.8 TB/s "
                                  "bidirectional)", 900.0, 72};
constexpr FabricSpec nvlink3_nvswitch{"nvlink", "NVLink 3 through NVSwitch (600 GB/s bidirectional)", 300.0, 8};
constexpr FabricSpec nvlink2_mesh{"nvlink", "NVLink 2 hybrid cube-mesh (300 GB/s bidirectional)", 150.0, 8};
constexpr FabricSpec mi300_xgmi{"xgmi", "Infinity Fabric, 7 xGMI links of 64 GB/s per direction to each peer", 448.0, 8};

// Each entry names only the fields its datasheet gives; the rest keep their
// defaults (empty optionals), which is what the warning would have us spell out.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-designated-field-initializers"
constexpr std::array<DeviceSpec, 195> specs = {{
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
     .source = "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix A (GeForce RTX 4090), "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures with FP32 accumulate (GeForce runs FP16-accumulate at twice the rate); no NVLink, "
              "and peer-to-peer over PCIe is disabled on GeForce"},
    {.id = "rtx-3090-24gb", .name = "RTX-3090", .product = "NVIDIA GeForce RTX 3090", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 936,
     .fp32_tflops = 35.6, .bf16_tflops = 71, .fp16_tflops = 71, .int8_tops = 284, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 350, .pci_vendor_id = nvidia, .pci_device_ids = {0x2204},
     .match = "rtx 3090 !ti",
     .source = "NVIDIA Ampere GA102 GPU architecture whitepaper (GeForce RTX 3090), "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
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
     .source = "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix A (GeForce RTX 4080 16GB), "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (76 SMs at 2.505 GHz boost, the RTX 4090's per-SM rates); "
              "no NVLink"},
    {.id = "rtx-3060-12gb", .name = "RTX-3060", .product = "NVIDIA GeForce RTX 3060 12GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 12 * GiB, .memory_bandwidth_gbps = 360,
     .fp32_tflops = 12.74, .bf16_tflops = 25.5, .fp16_tflops = 25.5, .int8_tops = 101.9, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 170, .pci_vendor_id = nvidia, .pci_device_ids = {0x2503, 0x2504, 0x2544},
     .match = "rtx 3060 !ti",
     .source = "NVIDIA GeForce RTX 3060 family specifications, https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3060-3060ti/",
     .notes = "tensor figures dense with FP32 accumulate, from 28 SMs at 1.777 GHz boost at the GA102 whitepaper's "
              "GeForce per-SM rates (half rate with FP32 accumulate); the 8 GB model (240 GB/s) is a separate entry"},
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
    {.id = "tesla-p40-24gb", .name = "Tesla-P40", .product = "NVIDIA Tesla P40", .vendor = "NVIDIA",
     .architecture = "Pascal", .compute_capability = "6.1", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 346,
     .fp32_tflops = 11.76, .int8_tops = 47, .pcie_generation = 3, .pcie_width = 16, .tdp_watts = 250,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x1b38}, .match = "tesla p40",
     .source = "NVIDIA Tesla P40 datasheet, "
               "https://images.nvidia.com/content/pdf/tesla/184427-Tesla-P40-Datasheet-NV-Final-Letter-Web.pdf",
     .notes = "no tensor cores and FP16 at 1/64 of the FP32 rate, so no 16-bit figure is given (llama.cpp runs "
              "its matrix products on it in FP32 and INT8 dp4a); fp32 at the 1531 MHz boost clock"},
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
    {.id = "a800-sxm4-80gb", .name = "A800-SXM-80GB", .product = "NVIDIA A800-SXM4-80GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.0", .memory_bytes = 80 * GiB, .memory_bandwidth_gbps = 2039,
     .fp32_tflops = 19.5, .bf16_tflops = 312, .fp16_tflops = 312, .int8_tops = 624,
     .fabric = FabricSpec{"nvlink", "NVLink 3 through NVSwitch, capped at 400 GB/s bidirectional", 200.0, 8},
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 400, .pci_vendor_id = nvidia, .pci_device_ids = {0x20f3},
     .match = "a800 sxm*",
     .source = "NVIDIA A100 Tensor Core GPU datasheet (the A800 is the A100 with NVLink capped at 400 GB/s, per "
               "NVIDIA's A800 product brief for China), https://www.nvidia.com/en-us/data-center/a100/",
     .notes = "compute and memory figures are the A100 SXM4 80GB datasheet's (dense); PCI ids from the README "
              "table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "a800-pcie-80gb", .name = "A800-PCIe-80GB", .product = "NVIDIA A800 80GB PCIe", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.0", .memory_bytes = 80 * GiB, .memory_bandwidth_gbps = 1935,
     .fp32_tflops = 19.5, .bf16_tflops = 312, .fp16_tflops = 312, .int8_tops = 624, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = nvidia, .pci_device_ids = {0x20f5}, .match = "a800 pcie",
     .source = "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe column; the A800 differs in NVLink only), "
               "https://www.nvidia.com/en-us/data-center/a100/",
     .notes = "an NVLink bridge (400 GB/s) is optional and not assumed; PCI ids from the README table of "
              "NVIDIA/open-gpu-kernel-modules"},
    {.id = "a30-24gb", .name = "A30-24GB", .product = "NVIDIA A30", .vendor = "NVIDIA", .architecture = "Ampere",
     .compute_capability = "8.0", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 933, .fp32_tflops = 10.3,
     .bf16_tflops = 165, .fp16_tflops = 165, .int8_tops = 330, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 165, .pci_vendor_id = nvidia, .pci_device_ids = {0x20b7}, .match = "a30",
     .source = "NVIDIA A30 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/products/a30-gpu/",
     .notes = "an NVLink bridge (200 GB/s, pairs) is optional and not assumed"},
    {.id = "a40-48gb", .name = "A40-48GB", .product = "NVIDIA A40", .vendor = "NVIDIA", .architecture = "Ampere",
     .compute_capability = "8.6", .memory_bytes = 48 * GiB, .memory_bandwidth_gbps = 696, .fp32_tflops = 37.4,
     .bf16_tflops = 149.7, .fp16_tflops = 149.7, .int8_tops = 299.3, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 300, .pci_vendor_id = nvidia, .pci_device_ids = {0x2235}, .match = "a40",
     .source = "NVIDIA A40 datasheet, https://www.nvidia.com/en-us/data-center/a40/",
     .notes = "an NVLink bridge (112.5 GB/s, pairs) is optional and not assumed"},
    {.id = "a16-gpu-16gb", .name = "A16", .product = "NVIDIA A16 (one of its four GPUs)", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 200,
     .fp32_tflops = 4.5, .bf16_tflops = 17.9, .fp16_tflops = 17.9, .int8_tops = 35.9, .pcie_generation = 4,
     .pcie_width = 16, .pci_vendor_id = nvidia, .pci_device_ids = {0x25b6}, .match = "a16", .devices_per_package = 4,
     .source = "NVIDIA A16 datasheet, https://www.nvidia.com/en-us/data-center/products/a16-gpu/",
     .notes = "figures per GPU: the board (4 x 16 GB, 4 x 200 GB/s, 250 W) is four devices; 0x25b6 is shared with "
              "the A2 (the name tells them apart)"},
    {.id = "a2-16gb", .name = "A2-16GB", .product = "NVIDIA A2", .vendor = "NVIDIA", .architecture = "Ampere",
     .compute_capability = "8.6", .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 200, .fp32_tflops = 4.5,
     .bf16_tflops = 18, .fp16_tflops = 18, .int8_tops = 36, .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 60,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x25b6}, .match = "a2",
     .source = "NVIDIA A2 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/products/a2/",
     .notes = "configurable 40-60 W; 0x25b6 is shared with the A16"},
    {.id = "h20-96gb", .name = "H20-96GB", .product = "NVIDIA H20", .vendor = "NVIDIA", .architecture = "Hopper",
     .compute_capability = "9.0", .memory_bytes = 96 * GiB, .memory_bandwidth_gbps = 4000, .fp32_tflops = 44,
     .bf16_tflops = 148, .fp16_tflops = 148, .fp8_tflops = 296, .int8_tops = 296, .fabric = nvlink4_nvswitch,
     .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 400, .pci_vendor_id = nvidia, .pci_device_ids = {0x2329},
     .match = "h20",
     .source = "NVIDIA HGX H20 figures as published for the China market (no public NVIDIA datasheet page); "
               "summarised at https://willitrunai.com/es/gpus/h20-96gb",
     .notes = "dense figures (148 FP16/BF16, 296 FP8/INT8) as reported; the 141 GB H20-3e (0x232c) is not covered"},
    {.id = "gh200-96gb", .name = "GH200-96GB", .product = "NVIDIA GH200 Grace Hopper Superchip (96 GB HBM3)",
     .vendor = "NVIDIA", .architecture = "Hopper", .compute_capability = "9.0", .memory_bytes = 96 * GiB,
     .memory_bandwidth_gbps = 4000, .fp32_tflops = 67, .bf16_tflops = 989.4, .fp16_tflops = 989.4,
     .fp8_tflops = 1978.9, .int8_tops = 1978.9, .pci_vendor_id = nvidia, .pci_device_ids = {0x2342}, .match = "gh200",
     .source = "NVIDIA GH200 Grace Hopper Superchip datasheet, "
               "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/",
     .notes = "the Hopper GPU of the superchip: its own HBM3, the H100 SXM's dense tensor figures; the Grace CPU's "
              "LPDDR5X (480 GB, nvidia-smi's \"GH200 480GB\") is reached coherently over NVLink-C2C (900 GB/s) and "
              "is not counted; the module's power (450-1000 W) covers CPU and GPU; no multi-node NVLink assumed"},
    {.id = "gh200-144gb", .name = "GH200-144GB", .product = "NVIDIA GH200 Grace Hopper Superchip (144 GB HBM3e)",
     .vendor = "NVIDIA", .architecture = "Hopper", .compute_capability = "9.0", .memory_bytes = 144 * GiB,
     .memory_bandwidth_gbps = 4900, .fp32_tflops = 67, .bf16_tflops = 989.4, .fp16_tflops = 989.4,
     .fp8_tflops = 1978.9, .int8_tops = 1978.9, .pci_vendor_id = nvidia, .pci_device_ids = {0x2342}, .match = "gh200",
     .source = "NVIDIA GH200 Grace Hopper Superchip datasheet, "
               "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/",
     .notes = "the HBM3e variant; see the 96 GB entry; memory size tells the two apart"},
    {.id = "l20-48gb", .name = "L20-48GB", .product = "NVIDIA L20", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 48 * GiB,
     .memory_bandwidth_gbps = 864, .fp32_tflops = 59.4, .bf16_tflops = 119.5, .fp16_tflops = 119.5, .fp8_tflops = 239,
     .int8_tops = 239, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 275, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x26ba}, .match = "l20",
     .source = "NVIDIA L20 figures as published for the China market (no public NVIDIA datasheet page); SM count "
               "and clocks from https://www.topcpu.net/en/gpu-c/a40-pcie-vs-l20",
     .notes = "dense FP16/FP8 as reported (119.5/239), consistent with 92 SMs at 2.52 GHz at the L40's half-rate "
              "FP32 accumulate; fp32 = 92 x 256 x 2.52 GHz"},
    {.id = "b300-sxm-288gb", .name = "B300-SXM-288GB", .product = "NVIDIA B300 (HGX B300, Blackwell Ultra)",
     .vendor = "NVIDIA", .architecture = "Blackwell", .compute_capability = "10.3", .memory_bytes = 288 * GiB,
     .memory_bandwidth_gbps = 8000, .fp32_tflops = 75, .bf16_tflops = 2250, .fp16_tflops = 2250, .fp8_tflops = 4500,
     .fabric = nvlink5_nvswitch, .pcie_generation = 6, .pcie_width = 16, .tdp_watts = 1100, .pci_vendor_id = nvidia,
     .match = "b300", .source = "NVIDIA HGX B300 specifications, https://www.nvidia.com/en-us/data-center/hgx/",
     .notes = "per-GPU figures are the 8-GPU HGX B300 figures divided by 8, sparse figures halved; Blackwell Ultra "
              "cut INT8 tensor throughput to a fraction of B200's, so int8 is left empty; PCI id not confirmed, "
              "left empty"},
    {.id = "gb200-186gb", .name = "GB200", .product = "NVIDIA GB200 (Blackwell GPU of GB200 NVL72)",
     .vendor = "NVIDIA", .architecture = "Blackwell", .compute_capability = "10.0", .memory_bytes = 186 * GiB,
     .memory_bandwidth_gbps = 8000, .fp32_tflops = 80, .bf16_tflops = 2500, .fp16_tflops = 2500, .fp8_tflops = 5000,
     .int8_tops = 5000,
     .fabric = nvlink5_nvl72,
     .tdp_watts = 1200, .pci_vendor_id = nvidia, .match = "gb200",
     .source = "NVIDIA GB200 NVL72 specifications, https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
     .notes = "per-GPU figures are the rack's (13.4 TB HBM3e, 576 TB/s, 360 PFLOPS FP16 sparse) divided by 72, "
              "sparse figures halved; attached to its Grace CPU over NVLink-C2C, not PCIe; PCI id not confirmed, "
              "left empty"},
    {.id = "gb300-288gb", .name = "GB300", .product = "NVIDIA GB300 (Blackwell Ultra GPU of GB300 NVL72)",
     .vendor = "NVIDIA", .architecture = "Blackwell", .compute_capability = "10.3", .memory_bytes = 288 * GiB,
     .memory_bandwidth_gbps = 8000, .fp32_tflops = 80, .bf16_tflops = 2500, .fp16_tflops = 2500, .fp8_tflops = 5000,
     .fabric = nvlink5_nvl72,
     .tdp_watts = 1400, .pci_vendor_id = nvidia, .match = "gb300",
     .source = "NVIDIA GB300 NVL72 specifications, https://www.nvidia.com/en-us/data-center/gb300-nvl72/",
     .notes = "per-GPU figures are the rack's (20 TB HBM3e, 576 TB/s, 360 PFLOPS FP8 dense) divided by 72; INT8 "
              "was cut on Blackwell Ultra and is left empty; attached over NVLink-C2C; PCI id not confirmed, left "
              "empty"},
    {.id = "gb10-128gb", .name = "GB10", .product = "NVIDIA GB10 Grace Blackwell Superchip (DGX Spark)",
     .vendor = "NVIDIA", .architecture = "Blackwell", .compute_capability = "12.1", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 273, .fp32_tflops = 31, .bf16_tflops = 123.5,
     .fp16_tflops = 123.5, .fp8_tflops = 246.9, .int8_tops = 246.9, .tdp_watts = 140, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2e12}, .match = "gb10",
     .source = "NVIDIA DGX Spark hardware overview, https://docs.nvidia.com/dgx/dgx-spark/hardware.html, and "
               "product page, https://www.nvidia.com/en-us/products/workstations/dgx-spark/ (128 GB LPDDR5x on a "
               "256-bit bus, 273 GB/s; 1 PFLOP FP4 with sparsity); FP32 as NVIDIA gave it at Hot Chips 2025, "
               "https://hc2025.hotchips.org/assets/program/conference/day2/21_nvidia_skende_final.pdf",
     .notes = "unified memory shared with the 20 Arm cores; NVIDIA publishes no dense tensor figure: dense FP4 is "
              "half the 1 PFLOP sparse figure, FP8 half of that and BF16/FP16 half again, which 48 SMs at about "
              "2.5 GHz with full-rate FP32 accumulate (1024 BF16 ops per SM per clock) also give; nvidia-smi "
              "prints its memory as N/A and its PCIe link as gen 1 x1 (there is none)"},
    {.id = "rtx-pro-6000-server-96gb", .name = "RTX-PRO-6000-Server",
     .product = "NVIDIA RTX PRO 6000 Blackwell Server Edition", .vendor = "NVIDIA", .architecture = "Blackwell",
     .compute_capability = "12.0", .memory_bytes = 96 * GiB, .memory_bandwidth_gbps = 1792, .fp32_tflops = 125.9,
     .bf16_tflops = 503.8, .fp16_tflops = 503.8, .fp8_tflops = 1007.6, .int8_tops = 1007.6, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 600, .pci_vendor_id = nvidia, .match = "rtx pro 6000 server",
     .source = "NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet, "
               "https://www.nvidia.com/en-us/data-center/rtx-pro-6000-blackwell-server-edition/",
     .notes = "dense figures from 188 SMs at 2.617 GHz boost at full-rate FP32 accumulate (BF16/FP16 1024, "
              "FP8/INT8 2048 ops per SM per clock): half the datasheet's 4000 sparse FP4 AI TOPS is 2000 dense "
              "FP4, twice the FP8 figure; fp32 = 188 x 256 x 2.617 GHz; no NVLink"},
    {.id = "rtx-pro-6000-workstation-96gb", .name = "RTX-PRO-6000-Workstation",
     .product = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", .vendor = "NVIDIA", .architecture = "Blackwell",
     .compute_capability = "12.0", .memory_bytes = 96 * GiB, .memory_bandwidth_gbps = 1792, .fp32_tflops = 125.9,
     .bf16_tflops = 503.8, .fp16_tflops = 503.8, .fp8_tflops = 1007.6, .int8_tops = 1007.6, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 600, .pci_vendor_id = nvidia, .match = "rtx pro 6000 workstation !max",
     .source = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition datasheet, "
               "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/",
     .notes = "dense figures from 188 SMs at 2.617 GHz boost at full-rate FP32 accumulate (BF16/FP16 1024, "
              "FP8/INT8 2048 ops per SM per clock): half the datasheet's 4000 sparse FP4 AI TOPS is 2000 dense "
              "FP4, twice the FP8 figure; fp32 = 188 x 256 x 2.617 GHz; no NVLink; the 300 W Max-Q edition does "
              "not match"},
    {.id = "rtx-a2000-6gb", .name = "RTX-A2000", .product = "NVIDIA RTX A2000", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 6 * GiB, .memory_bandwidth_gbps = 288,
     .fp32_tflops = 7.99, .bf16_tflops = 31.9, .fp16_tflops = 31.9, .int8_tops = 63.9, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 70, .pci_vendor_id = nvidia, .pci_device_ids = {0x2531},
     .match = "rtx a2000 !laptop",
     .source = "NVIDIA RTX A2000 datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-a2000/",
     .notes = "tensor figures dense with FP32 accumulate (full rate on workstation parts): 26 SMs x 1.2 GHz boost "
              "x 1024 (BF16/FP16) or 2048 (INT8) ops per SM per clock, half the datasheet's sparse tensor figure"},
    {.id = "rtx-a2000-12gb", .name = "RTX-A2000-12GB", .product = "NVIDIA RTX A2000 12GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 12 * GiB, .memory_bandwidth_gbps = 288,
     .fp32_tflops = 7.99, .bf16_tflops = 31.9, .fp16_tflops = 31.9, .int8_tops = 63.9, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 70, .pci_vendor_id = nvidia, .pci_device_ids = {0x2571},
     .match = "rtx a2000 !laptop",
     .source = "NVIDIA RTX A2000 datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-a2000/",
     .notes = "tensor figures dense with FP32 accumulate (full rate on workstation parts): 26 SMs x 1.2 GHz boost "
              "x 1024 (BF16/FP16) or 2048 (INT8) ops per SM per clock, half the datasheet's sparse tensor figure"},
    {.id = "rtx-a4000-16gb", .name = "RTX-A4000", .product = "NVIDIA RTX A4000", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 448,
     .fp32_tflops = 19.2, .bf16_tflops = 76.7, .fp16_tflops = 76.7, .int8_tops = 153.4, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 140, .pci_vendor_id = nvidia, .pci_device_ids = {0x24b0},
     .match = "rtx a4000 !laptop",
     .source = "NVIDIA RTX A4000 datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-a4000/",
     .notes = "tensor figures dense with FP32 accumulate (full rate on workstation parts): 48 SMs x 1.56 GHz boost "
              "x 1024 (BF16/FP16) or 2048 (INT8) ops per SM per clock, half the datasheet's sparse tensor figure"},
    {.id = "rtx-a4500-20gb", .name = "RTX-A4500", .product = "NVIDIA RTX A4500", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 20 * GiB, .memory_bandwidth_gbps = 640,
     .fp32_tflops = 23.7, .bf16_tflops = 94.6, .fp16_tflops = 94.6, .int8_tops = 189.2, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 200, .pci_vendor_id = nvidia, .pci_device_ids = {0x2232},
     .match = "rtx a4500 !laptop",
     .source = "NVIDIA RTX A4500 datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-a4500/",
     .notes = "tensor figures dense with FP32 accumulate (full rate on workstation parts): 56 SMs x 1.65 GHz boost "
              "x 1024 (BF16/FP16) or 2048 (INT8) ops per SM per clock, half the datasheet's sparse tensor figure"},
    {.id = "rtx-a5000-24gb", .name = "RTX-A5000", .product = "NVIDIA RTX A5000", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 768,
     .fp32_tflops = 27.8, .bf16_tflops = 111.1, .fp16_tflops = 111.1, .int8_tops = 222.2, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 230, .pci_vendor_id = nvidia, .pci_device_ids = {0x2231},
     .match = "rtx a5000 !laptop",
     .source = "NVIDIA RTX A5000 datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-a5000/",
     .notes = "tensor figures dense with FP32 accumulate (full rate on workstation parts): 64 SMs x 1.695 GHz "
              "boost x 1024 (BF16/FP16) or 2048 (INT8) ops per SM per clock, half the datasheet's sparse tensor "
              "figure"},
    {.id = "rtx-a5500-24gb", .name = "RTX-A5500", .product = "NVIDIA RTX A5500", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 768,
     .fp32_tflops = 34.1, .bf16_tflops = 136.4, .fp16_tflops = 136.4, .int8_tops = 272.8, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 230, .pci_vendor_id = nvidia, .pci_device_ids = {0x2233},
     .match = "rtx a5500 !laptop",
     .source = "NVIDIA RTX A5500 datasheet, https://www.nvidia.com/en-us/design-visualization/rtx-a5500/",
     .notes = "tensor figures dense with FP32 accumulate (full rate on workstation parts): 80 SMs x 1.665 GHz "
              "boost x 1024 (BF16/FP16) or 2048 (INT8) ops per SM per clock, half the datasheet's sparse tensor "
              "figure"},
    {.id = "rtx-2000-ada-16gb", .name = "RTX-2000-Ada", .product = "NVIDIA RTX 2000 Ada Generation",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 224, .fp32_tflops = 12, .bf16_tflops = 48, .fp16_tflops = 48, .fp8_tflops = 96,
     .int8_tops = 96, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 70, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x28b0}, .match = "rtx 2000 ada !laptop",
     .source = "NVIDIA RTX 2000 Ada Generation datasheet, "
               "https://www.nvidia.com/en-us/design-visualization/rtx-2000/",
     .notes = "tensor figures dense with FP32 accumulate: 22 SMs x 2.13 GHz boost x 1024 (BF16/FP16) or 2048 "
              "(FP8/INT8) ops per SM per clock, half the datasheet's sparse FP8 AI TOPS; no NVLink"},
    {.id = "rtx-4000-sff-ada-20gb", .name = "RTX-4000-SFF-Ada", .product = "NVIDIA RTX 4000 SFF Ada Generation",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 20 * GiB,
     .memory_bandwidth_gbps = 280, .fp32_tflops = 19.2, .bf16_tflops = 76.7, .fp16_tflops = 76.7, .fp8_tflops = 153.4,
     .int8_tops = 153.4, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 70, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x27b0}, .match = "rtx 4000 sff ada",
     .source = "NVIDIA RTX 4000 SFF Ada Generation datasheet, "
               "https://www.nvidia.com/en-us/design-visualization/rtx-4000-sff/",
     .notes = "tensor figures dense with FP32 accumulate: 48 SMs x 1.56 GHz boost x 1024 (BF16/FP16) or 2048 "
              "(FP8/INT8) ops per SM per clock, half the datasheet's sparse FP8 AI TOPS; no NVLink"},
    {.id = "rtx-4000-ada-20gb", .name = "RTX-4000-Ada", .product = "NVIDIA RTX 4000 Ada Generation",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 20 * GiB,
     .memory_bandwidth_gbps = 360, .fp32_tflops = 26.7, .bf16_tflops = 106.9, .fp16_tflops = 106.9,
     .fp8_tflops = 213.8, .int8_tops = 213.8, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 130,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x27b2}, .match = "rtx 4000 ada !sff !laptop",
     .source = "NVIDIA RTX 4000 Ada Generation datasheet, "
               "https://www.nvidia.com/en-us/design-visualization/rtx-4000/",
     .notes = "tensor figures dense with FP32 accumulate: 48 SMs x 2.175 GHz boost x 1024 (BF16/FP16) or 2048 "
              "(FP8/INT8) ops per SM per clock, half the datasheet's sparse FP8 AI TOPS; no NVLink"},
    {.id = "rtx-4500-ada-24gb", .name = "RTX-4500-Ada", .product = "NVIDIA RTX 4500 Ada Generation",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 24 * GiB,
     .memory_bandwidth_gbps = 432, .fp32_tflops = 39.6, .bf16_tflops = 158.5, .fp16_tflops = 158.5, .fp8_tflops = 317,
     .int8_tops = 317, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 210, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x27b1}, .match = "rtx 4500 ada !laptop",
     .source = "NVIDIA RTX 4500 Ada Generation datasheet, "
               "https://www.nvidia.com/en-us/design-visualization/rtx-4500/",
     .notes = "tensor figures dense with FP32 accumulate: 60 SMs x 2.58 GHz boost x 1024 (BF16/FP16) or 2048 "
              "(FP8/INT8) ops per SM per clock, half the datasheet's sparse FP8 AI TOPS; no NVLink"},
    {.id = "rtx-5000-ada-32gb", .name = "RTX-5000-Ada", .product = "NVIDIA RTX 5000 Ada Generation",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 576, .fp32_tflops = 65.3, .bf16_tflops = 261.1, .fp16_tflops = 261.1,
     .fp8_tflops = 522.2, .int8_tops = 522.2, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 250,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x26b2}, .match = "rtx 5000 ada !laptop",
     .source = "NVIDIA RTX 5000 Ada Generation datasheet, "
               "https://www.nvidia.com/en-us/design-visualization/rtx-5000/",
     .notes = "tensor figures dense with FP32 accumulate: 100 SMs x 2.55 GHz boost x 1024 (BF16/FP16) or 2048 "
              "(FP8/INT8) ops per SM per clock, half the datasheet's sparse FP8 AI TOPS; no NVLink"},
    {.id = "rtx-2060-6gb", .name = "RTX-2060", .product = "NVIDIA GeForce RTX 2060", .vendor = "NVIDIA",
     .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 6 * GiB, .memory_bandwidth_gbps = 336,
     .fp32_tflops = 6.45, .fp16_tflops = 25.8, .int8_tops = 103.2, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 160, .pci_vendor_id = nvidia, .pci_device_ids = {0x1e89, 0x1f03, 0x1f08},
     .match = "rtx 2060 !super !laptop !max",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 30 "
              "SMs x 1.68 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 30 SMs x 128 x 1.68 GHz; no "
              "bf16 or fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules; "
              "the 12 GB model is a separate entry; memory size tells them apart"},
    {.id = "rtx-2060-12gb", .name = "RTX-2060-12GB", .product = "NVIDIA GeForce RTX 2060 12GB", .vendor = "NVIDIA",
     .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 12 * GiB, .memory_bandwidth_gbps = 336,
     .fp32_tflops = 7.18, .fp16_tflops = 28.7, .int8_tops = 114.9, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 185, .pci_vendor_id = nvidia, .pci_device_ids = {0x1e89, 0x1f03, 0x1f08},
     .match = "rtx 2060 !super !laptop !max",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 34 "
              "SMs x 1.65 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 34 SMs x 128 x 1.65 GHz; no "
              "bf16 or fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-2060-super-8gb", .name = "RTX-2060-Super", .product = "NVIDIA GeForce RTX 2060 SUPER",
     .vendor = "NVIDIA", .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 448, .fp32_tflops = 7.18, .fp16_tflops = 28.7, .int8_tops = 114.9, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 175, .pci_vendor_id = nvidia, .pci_device_ids = {0x1f06, 0x1f42, 0x1f47},
     .match = "rtx 2060 super !max",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 34 "
              "SMs x 1.65 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 34 SMs x 128 x 1.65 GHz; no "
              "bf16 or fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-2070-8gb", .name = "RTX-2070", .product = "NVIDIA GeForce RTX 2070", .vendor = "NVIDIA",
     .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 448,
     .fp32_tflops = 7.46, .fp16_tflops = 29.9, .int8_tops = 119.4, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 175, .pci_vendor_id = nvidia, .pci_device_ids = {0x1f02, 0x1f07},
     .match = "rtx 2070 !super !laptop !max",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 36 "
              "SMs x 1.62 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 36 SMs x 128 x 1.62 GHz; no "
              "bf16 or fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-2070-super-8gb", .name = "RTX-2070-Super", .product = "NVIDIA GeForce RTX 2070 SUPER",
     .vendor = "NVIDIA", .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 448, .fp32_tflops = 9.06, .fp16_tflops = 36.2, .int8_tops = 145, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 215, .pci_vendor_id = nvidia, .pci_device_ids = {0x1e84, 0x1ec2, 0x1ec7},
     .match = "rtx 2070 super !max",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 40 "
              "SMs x 1.77 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 40 SMs x 128 x 1.77 GHz; no "
              "bf16 or fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-2080-8gb", .name = "RTX-2080", .product = "NVIDIA GeForce RTX 2080", .vendor = "NVIDIA",
     .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 448,
     .fp32_tflops = 10.1, .fp16_tflops = 40.3, .int8_tops = 161.1, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 215, .pci_vendor_id = nvidia, .pci_device_ids = {0x1e82, 0x1e87},
     .match = "rtx 2080 !super !ti !laptop !max",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 46 "
              "SMs x 1.71 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 46 SMs x 128 x 1.71 GHz; no "
              "bf16 or fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-2080-super-8gb", .name = "RTX-2080-Super", .product = "NVIDIA GeForce RTX 2080 SUPER",
     .vendor = "NVIDIA", .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 496, .fp32_tflops = 11.2, .fp16_tflops = 44.6, .int8_tops = 178.4, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 250, .pci_vendor_id = nvidia, .pci_device_ids = {0x1e81},
     .match = "rtx 2080 super !max",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 48 "
              "SMs x 1.815 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 48 SMs x 128 x 1.815 GHz; "
              "no bf16 or fp8 arithmetic; no NVLink; PCI ids from the README table of "
              "NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-2080-ti-11gb", .name = "RTX-2080-Ti", .product = "NVIDIA GeForce RTX 2080 Ti", .vendor = "NVIDIA",
     .architecture = "Turing", .compute_capability = "7.5", .memory_bytes = 11 * GiB, .memory_bandwidth_gbps = 616,
     .fp32_tflops = 13.4, .fp16_tflops = 53.8, .int8_tops = 215.2, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 250, .pci_vendor_id = nvidia, .pci_device_ids = {0x1e04, 0x1e07}, .match = "rtx 2080 ti",
     .source = "NVIDIA GeForce RTX 20 Series specifications, https://www.nvidia.com/en-us/geforce/20-series/; "
               "per-SM rates from the NVIDIA Turing GPU architecture whitepaper, appendix A, "
               "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architectu"
               "re/NVIDIA-Turing-Architecture-Whitepaper.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 68 "
              "SMs x 1.545 GHz boost x FP16 512, INT8 2048 ops per SM per clock; fp32 = 68 SMs x 128 x 1.545 GHz; "
              "no bf16 or fp8 arithmetic; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules; an "
              "NVLink bridge (50 GB/s per direction) is optional and not assumed"},
    {.id = "rtx-3050-8gb", .name = "RTX-3050", .product = "NVIDIA GeForce RTX 3050", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 224,
     .fp32_tflops = 9.1, .bf16_tflops = 18.2, .fp16_tflops = 18.2, .int8_tops = 72.8, .pcie_generation = 4,
     .pcie_width = 8, .tdp_watts = 130, .pci_vendor_id = nvidia, .pci_device_ids = {0x2507, 0x2582},
     .match = "rtx 3050 !ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 20 "
              "SMs x 1.777 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 20 SMs x 256 x 1.777 "
              "GHz; no fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules; "
              "the 6 GB model (2024) does not match"},
    {.id = "rtx-3060-8gb", .name = "RTX-3060-8GB", .product = "NVIDIA GeForce RTX 3060 8GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 240,
     .fp32_tflops = 12.7, .bf16_tflops = 25.5, .fp16_tflops = 25.5, .int8_tops = 101.9, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 170, .pci_vendor_id = nvidia, .match = "rtx 3060 !ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 28 "
              "SMs x 1.777 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 28 SMs x 256 x 1.777 "
              "GHz; no fp8 arithmetic; no NVLink; the 12 GB model is a separate entry; memory size tells them "
              "apart; PCI ids not confirmed, left empty"},
    {.id = "rtx-3060-ti-8gb", .name = "RTX-3060-Ti", .product = "NVIDIA GeForce RTX 3060 Ti", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 448,
     .fp32_tflops = 16.2, .bf16_tflops = 32.4, .fp16_tflops = 32.4, .int8_tops = 129.6, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 200, .pci_vendor_id = nvidia, .pci_device_ids = {0x2414, 0x2486, 0x2489, 0x24c9},
     .match = "rtx 3060 ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 38 "
              "SMs x 1.665 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 38 SMs x 256 x 1.665 "
              "GHz; no fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-3070-8gb", .name = "RTX-3070", .product = "NVIDIA GeForce RTX 3070", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 448,
     .fp32_tflops = 20.3, .bf16_tflops = 40.6, .fp16_tflops = 40.6, .int8_tops = 162.5, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 220, .pci_vendor_id = nvidia, .pci_device_ids = {0x2484, 0x2488},
     .match = "rtx 3070 !ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 46 "
              "SMs x 1.725 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 46 SMs x 256 x 1.725 "
              "GHz; no fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-3070-ti-8gb", .name = "RTX-3070-Ti", .product = "NVIDIA GeForce RTX 3070 Ti", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 608,
     .fp32_tflops = 21.7, .bf16_tflops = 43.5, .fp16_tflops = 43.5, .int8_tops = 174, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 290, .pci_vendor_id = nvidia, .pci_device_ids = {0x2207, 0x2482},
     .match = "rtx 3070 ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 48 "
              "SMs x 1.77 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 48 SMs x 256 x 1.77 "
              "GHz; no fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-3080-10gb", .name = "RTX-3080", .product = "NVIDIA GeForce RTX 3080", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 10 * GiB, .memory_bandwidth_gbps = 760,
     .fp32_tflops = 29.8, .bf16_tflops = 59.5, .fp16_tflops = 59.5, .int8_tops = 238.1, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 320, .pci_vendor_id = nvidia, .pci_device_ids = {0x2206, 0x220a, 0x2216},
     .match = "rtx 3080 !ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 68 "
              "SMs x 1.71 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 68 SMs x 256 x 1.71 "
              "GHz; no fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules; "
              "the 12 GB model is a separate entry; memory size tells them apart"},
    {.id = "rtx-3080-12gb", .name = "RTX-3080-12GB", .product = "NVIDIA GeForce RTX 3080 12GB", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 12 * GiB, .memory_bandwidth_gbps = 912,
     .fp32_tflops = 30.6, .bf16_tflops = 61.3, .fp16_tflops = 61.3, .int8_tops = 245.1, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 350, .pci_vendor_id = nvidia, .pci_device_ids = {0x2206, 0x220a, 0x2216},
     .match = "rtx 3080 !ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 70 "
              "SMs x 1.71 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 70 SMs x 256 x 1.71 "
              "GHz; no fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-3080-ti-12gb", .name = "RTX-3080-Ti", .product = "NVIDIA GeForce RTX 3080 Ti", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 12 * GiB, .memory_bandwidth_gbps = 912,
     .fp32_tflops = 34.1, .bf16_tflops = 68.2, .fp16_tflops = 68.2, .int8_tops = 272.8, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 350, .pci_vendor_id = nvidia, .pci_device_ids = {0x2208},
     .match = "rtx 3080 ti !laptop",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 80 "
              "SMs x 1.665 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 80 SMs x 256 x 1.665 "
              "GHz; no fp8 arithmetic; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-3090-ti-24gb", .name = "RTX-3090-Ti", .product = "NVIDIA GeForce RTX 3090 Ti", .vendor = "NVIDIA",
     .architecture = "Ampere", .compute_capability = "8.6", .memory_bytes = 24 * GiB, .memory_bandwidth_gbps = 1008,
     .fp32_tflops = 40, .bf16_tflops = 80, .fp16_tflops = 80, .int8_tops = 320, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 450, .pci_vendor_id = nvidia, .pci_device_ids = {0x2203}, .match = "rtx 3090 ti",
     .source = "NVIDIA GeForce RTX 30 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/; per-SM rates from the NVIDIA Ampere "
               "GA102 GPU architecture whitepaper, "
               "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 84 "
              "SMs x 1.86 GHz boost x BF16/FP16 512, INT8 2048 ops per SM per clock; fp32 = 84 SMs x 256 x 1.86 "
              "GHz; no fp8 arithmetic; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules; an NVLink "
              "bridge (112.5 GB/s bidirectional) is optional and not assumed"},
    {.id = "rtx-4060-8gb", .name = "RTX-4060", .product = "NVIDIA GeForce RTX 4060", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 272, .fp32_tflops = 15.1, .bf16_tflops = 30.2, .fp16_tflops = 30.2, .fp8_tflops = 60.5,
     .int8_tops = 120.9, .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 115, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2808, 0x2882}, .match = "rtx 4060 !ti !laptop",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 24 "
              "SMs x 2.46 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 24 SMs x 256 "
              "x 2.46 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-4060-ti-8gb", .name = "RTX-4060-Ti-8GB", .product = "NVIDIA GeForce RTX 4060 Ti 8GB",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 288, .fp32_tflops = 22.1, .bf16_tflops = 44.1, .fp16_tflops = 44.1, .fp8_tflops = 88.3,
     .int8_tops = 176.5, .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 160, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2803, 0x2805}, .match = "rtx 4060 ti !laptop",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 34 "
              "SMs x 2.535 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 34 SMs x "
              "256 x 2.535 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules; the 8 "
              "GB and 16 GB models share a name; memory size tells them apart"},
    {.id = "rtx-4060-ti-16gb", .name = "RTX-4060-Ti-16GB", .product = "NVIDIA GeForce RTX 4060 Ti 16GB",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 288, .fp32_tflops = 22.1, .bf16_tflops = 44.1, .fp16_tflops = 44.1, .fp8_tflops = 88.3,
     .int8_tops = 176.5, .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 165, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2803, 0x2805}, .match = "rtx 4060 ti !laptop",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 34 "
              "SMs x 2.535 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 34 SMs x "
              "256 x 2.535 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules; the 8 "
              "GB and 16 GB models share a name; memory size tells them apart"},
    {.id = "rtx-4070-12gb", .name = "RTX-4070", .product = "NVIDIA GeForce RTX 4070", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 12 * GiB,
     .memory_bandwidth_gbps = 504, .fp32_tflops = 29.1, .bf16_tflops = 58.3, .fp16_tflops = 58.3, .fp8_tflops = 116.6,
     .int8_tops = 233.2, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 200, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2709, 0x2786}, .match = "rtx 4070 !ti !super !laptop",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 46 "
              "SMs x 2.475 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 46 SMs x "
              "256 x 2.475 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-4070-super-12gb", .name = "RTX-4070-Super", .product = "NVIDIA GeForce RTX 4070 SUPER",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 12 * GiB,
     .memory_bandwidth_gbps = 504, .fp32_tflops = 35.5, .bf16_tflops = 71, .fp16_tflops = 71, .fp8_tflops = 141.9,
     .int8_tops = 283.9, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 220, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2783}, .match = "rtx 4070 super !ti",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 56 "
              "SMs x 2.475 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 56 SMs x "
              "256 x 2.475 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-4070-ti-12gb", .name = "RTX-4070-Ti", .product = "NVIDIA GeForce RTX 4070 Ti", .vendor = "NVIDIA",
     .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 12 * GiB,
     .memory_bandwidth_gbps = 504, .fp32_tflops = 40.1, .bf16_tflops = 80.2, .fp16_tflops = 80.2, .fp8_tflops = 160.4,
     .int8_tops = 320.7, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 285, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2782}, .match = "rtx 4070 ti !super",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 60 "
              "SMs x 2.61 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 60 SMs x 256 "
              "x 2.61 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-4070-ti-super-16gb", .name = "RTX-4070-Ti-Super", .product = "NVIDIA GeForce RTX 4070 Ti SUPER",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 672, .fp32_tflops = 44.1, .bf16_tflops = 88.2, .fp16_tflops = 88.2, .fp8_tflops = 176.4,
     .int8_tops = 352.8, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 285, .pci_vendor_id = nvidia,
     .pci_device_ids = {0x2705}, .match = "rtx 4070 ti super",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 66 "
              "SMs x 2.61 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 66 SMs x 256 "
              "x 2.61 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-4080-super-16gb", .name = "RTX-4080-Super", .product = "NVIDIA GeForce RTX 4080 SUPER",
     .vendor = "NVIDIA", .architecture = "Ada Lovelace", .compute_capability = "8.9", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 736, .fp32_tflops = 52.2, .bf16_tflops = 104.4, .fp16_tflops = 104.4,
     .fp8_tflops = 208.9, .int8_tops = 417.8, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 320,
     .pci_vendor_id = nvidia, .pci_device_ids = {0x2702}, .match = "rtx 4080 super",
     .source = "NVIDIA GeForce RTX 40 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/; per-SM rates from the NVIDIA Ada "
               "Lovelace GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 80 "
              "SMs x 2.55 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 80 SMs x 256 "
              "x 2.55 GHz; no NVLink; PCI ids from the README table of NVIDIA/open-gpu-kernel-modules"},
    {.id = "rtx-5060-8gb", .name = "RTX-5060", .product = "NVIDIA GeForce RTX 5060", .vendor = "NVIDIA",
     .architecture = "Blackwell", .compute_capability = "12.0", .memory_bytes = 8 * GiB, .memory_bandwidth_gbps = 448,
     .fp32_tflops = 19.2, .bf16_tflops = 38.4, .fp16_tflops = 38.4, .fp8_tflops = 76.7, .int8_tops = 153.4,
     .pcie_generation = 5, .pcie_width = 8, .tdp_watts = 145, .pci_vendor_id = nvidia,
     .match = "rtx 5060 !ti !laptop",
     .source = "NVIDIA GeForce RTX 50 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/; per-SM rates from the NVIDIA RTX "
               "Blackwell GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.p"
               "df",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 30 "
              "SMs x 2.497 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 30 SMs x "
              "256 x 2.497 GHz; no NVLink; PCI ids not confirmed, left empty"},
    {.id = "rtx-5060-ti-8gb", .name = "RTX-5060-Ti-8GB", .product = "NVIDIA GeForce RTX 5060 Ti 8GB",
     .vendor = "NVIDIA", .architecture = "Blackwell", .compute_capability = "12.0", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 448, .fp32_tflops = 23.7, .bf16_tflops = 47.4, .fp16_tflops = 47.4, .fp8_tflops = 94.8,
     .int8_tops = 189.6, .pcie_generation = 5, .pcie_width = 8, .tdp_watts = 180, .pci_vendor_id = nvidia,
     .match = "rtx 5060 ti !laptop",
     .source = "NVIDIA GeForce RTX 50 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/; per-SM rates from the NVIDIA RTX "
               "Blackwell GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.p"
               "df",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 36 "
              "SMs x 2.572 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 36 SMs x "
              "256 x 2.572 GHz; no NVLink; the 8 GB and 16 GB models share a name; memory size tells them apart; "
              "PCI ids not confirmed, left empty"},
    {.id = "rtx-5060-ti-16gb", .name = "RTX-5060-Ti-16GB", .product = "NVIDIA GeForce RTX 5060 Ti 16GB",
     .vendor = "NVIDIA", .architecture = "Blackwell", .compute_capability = "12.0", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 448, .fp32_tflops = 23.7, .bf16_tflops = 47.4, .fp16_tflops = 47.4, .fp8_tflops = 94.8,
     .int8_tops = 189.6, .pcie_generation = 5, .pcie_width = 8, .tdp_watts = 180, .pci_vendor_id = nvidia,
     .match = "rtx 5060 ti !laptop",
     .source = "NVIDIA GeForce RTX 50 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/; per-SM rates from the NVIDIA RTX "
               "Blackwell GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.p"
               "df",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 36 "
              "SMs x 2.572 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 36 SMs x "
              "256 x 2.572 GHz; no NVLink; the 8 GB and 16 GB models share a name; memory size tells them apart; "
              "PCI ids not confirmed, left empty"},
    {.id = "rtx-5070-12gb", .name = "RTX-5070", .product = "NVIDIA GeForce RTX 5070", .vendor = "NVIDIA",
     .architecture = "Blackwell", .compute_capability = "12.0", .memory_bytes = 12 * GiB,
     .memory_bandwidth_gbps = 672, .fp32_tflops = 30.9, .bf16_tflops = 61.7, .fp16_tflops = 61.7, .fp8_tflops = 123.5,
     .int8_tops = 246.9, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 250, .pci_vendor_id = nvidia,
     .match = "rtx 5070 !ti !laptop",
     .source = "NVIDIA GeForce RTX 50 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/; per-SM rates from the NVIDIA RTX "
               "Blackwell GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.p"
               "df",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 48 "
              "SMs x 2.512 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 48 SMs x "
              "256 x 2.512 GHz; no NVLink; PCI ids not confirmed, left empty"},
    {.id = "rtx-5070-ti-16gb", .name = "RTX-5070-Ti", .product = "NVIDIA GeForce RTX 5070 Ti", .vendor = "NVIDIA",
     .architecture = "Blackwell", .compute_capability = "12.0", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 896, .fp32_tflops = 43.9, .bf16_tflops = 87.9, .fp16_tflops = 87.9, .fp8_tflops = 175.8,
     .int8_tops = 351.5, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = nvidia,
     .match = "rtx 5070 ti !laptop",
     .source = "NVIDIA GeForce RTX 50 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/; per-SM rates from the NVIDIA RTX "
               "Blackwell GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.p"
               "df",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 70 "
              "SMs x 2.452 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 70 SMs x "
              "256 x 2.452 GHz; no NVLink; PCI ids not confirmed, left empty"},
    {.id = "rtx-5080-16gb", .name = "RTX-5080", .product = "NVIDIA GeForce RTX 5080", .vendor = "NVIDIA",
     .architecture = "Blackwell", .compute_capability = "12.0", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 960, .fp32_tflops = 56.3, .bf16_tflops = 112.6, .fp16_tflops = 112.6,
     .fp8_tflops = 225.1, .int8_tops = 450.2, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 360,
     .pci_vendor_id = nvidia, .match = "rtx 5080 !laptop",
     .source = "NVIDIA GeForce RTX 50 Series specifications, "
               "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/; per-SM rates from the NVIDIA RTX "
               "Blackwell GPU architecture whitepaper, "
               "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.p"
               "df",
     .notes = "tensor figures dense with FP32 accumulate (GeForce runs it at half the FP16-accumulate rate): 84 "
              "SMs x 2.617 GHz boost x BF16/FP16 512, FP8 1024, INT8 2048 ops per SM per clock; fp32 = 84 SMs x "
              "256 x 2.617 GHz; no NVLink; PCI ids not confirmed, left empty"},
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
    {.id = "mi355x-288gb", .name = "MI355X-288GB", .product = "AMD Instinct MI355X", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA4", .compute_capability = "gfx950", .memory_bytes = 288 * GiB,
     .memory_bandwidth_gbps = 8000, .fp32_tflops = 157.3, .bf16_tflops = 2516.6, .fp16_tflops = 2516.6,
     .fp8_tflops = 5033.2, .int8_tops = 5033.2,
     .fabric = FabricSpec{"xgmi", "Infinity Fabric, 8-GPU platform", std::nullopt, 8}, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 1400, .pci_vendor_id = amd, .match = "mi355x",
     .source = "AMD Instinct MI355X accelerator specifications, "
               "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html",
     .notes = "dense matrix figures (the datasheet's sparsity figures are twice these); per-link Infinity Fabric "
              "bandwidth not taken from the datasheet, left empty; PCI id not confirmed, left empty"},
    {.id = "mi350x-288gb", .name = "MI350X-288GB", .product = "AMD Instinct MI350X", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA4", .compute_capability = "gfx950", .memory_bytes = 288 * GiB,
     .memory_bandwidth_gbps = 8000, .fp32_tflops = 144.2, .bf16_tflops = 2307.2, .fp16_tflops = 2307.2,
     .fp8_tflops = 4614.4, .int8_tops = 4614.4,
     .fabric = FabricSpec{"xgmi", "Infinity Fabric, 8-GPU platform", std::nullopt, 8}, .pcie_generation = 5,
     .pcie_width = 16, .tdp_watts = 1000, .pci_vendor_id = amd, .match = "mi350x",
     .source = "AMD Instinct MI350X accelerator specifications, "
               "https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html",
     .notes = "dense matrix figures; per-link Infinity Fabric bandwidth left empty; PCI id not confirmed, left "
              "empty"},
    {.id = "mi308x-192gb", .name = "MI308X-192GB", .product = "AMD Instinct MI308X", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA3", .compute_capability = "gfx942", .memory_bytes = 192 * GiB,
     .memory_bandwidth_gbps = 5300, .fp32_tflops = 43, .bf16_tflops = 344.1, .fp16_tflops = 344.1,
     .fp8_tflops = 688.1, .int8_tops = 688.1, .fabric = mi300_xgmi, .pcie_generation = 5, .pcie_width = 16,
     .pci_vendor_id = amd, .pci_device_ids = {0x74a2, 0x74b6}, .match = "mi308x",
     .source = "AMD publishes no MI308X datasheet; memory and bandwidth are the MI300X's, per-CU rates from the AMD "
               "Instinct MI300X datasheet, https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
     .notes = "derived: 80 CUs (4 XCDs of 20, as the ROCm detector's table has it) x 2.1 GHz x 2048 (BF16/FP16) or "
              "4096 (FP8/INT8) dense ops per CU per clock, the MI300X's rates; fp32 = 80 x 256 x 2.1 GHz; PCI ids "
              "as modules/detect/detectors/rocm.cpp lists them (pci.ids, libdrm's amdgpu.ids)"},
    {.id = "mi300a-128gb", .name = "MI300A-128GB", .product = "AMD Instinct MI300A", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA3", .compute_capability = "gfx942", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 5300, .fp32_tflops = 122.6, .bf16_tflops = 980.6,
     .fp16_tflops = 980.6, .fp8_tflops = 1961.2, .int8_tops = 1961.2, .tdp_watts = 550, .pci_vendor_id = amd,
     .pci_device_ids = {0x74a0}, .match = "mi300a",
     .source = "AMD Instinct MI300A APU specifications, "
               "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300a.html",
     .notes = "an APU: its 128 GB HBM3 is also the host's memory; dense matrix figures; socket-to-socket Infinity "
              "Fabric not modelled; PCI ids as modules/detect/detectors/rocm.cpp lists them (pci.ids, libdrm's "
              "amdgpu.ids)"},
    {.id = "mi250-gcd-64gb", .name = "MI250", .product = "AMD Instinct MI250 (one GCD)", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA2", .compute_capability = "gfx90a", .memory_bytes = 64 * GiB,
     .memory_bandwidth_gbps = 1638.4, .fp32_tflops = 22.65, .bf16_tflops = 181.05, .fp16_tflops = 181.05,
     .int8_tops = 181.05, .fabric = FabricSpec{"xgmi", "Infinity Fabric (6 links per module)", std::nullopt, 8},
     .pcie_generation = 4, .pcie_width = 16, .pci_vendor_id = amd, .pci_device_ids = {0x740c},
     .match = "mi250 !mi250x", .devices_per_package = 2,
     .source = "AMD Instinct MI250 accelerator specifications, "
               "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250.html",
     .notes = "figures per GCD: the module (128 GB, 3.2768 TB/s, 362.1 TFLOPS fp16/bf16, 45.3 TFLOPS fp32, 500 W) "
              "is two devices; 0x740c is shared with the MI250X (\"MI250X / MI250\" names the MI250X)"},
    {.id = "mi100-32gb", .name = "MI100-32GB", .product = "AMD Instinct MI100", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "CDNA", .compute_capability = "gfx908", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 1228.8, .fp32_tflops = 23.1, .bf16_tflops = 92.3, .fp16_tflops = 184.6,
     .int8_tops = 184.6, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = amd,
     .pci_device_ids = {0x738c, 0x738e}, .match = "mi100",
     .source = "AMD Instinct MI100 accelerator specifications, "
               "https://www.amd.com/en/products/accelerators/instinct/mi100.html",
     .notes = "matrix-core peaks (bf16 at half the fp16 rate on CDNA1); the Infinity Fabric bridge (up to 4 cards) "
              "is optional and not assumed; PCI ids as modules/detect/detectors/rocm.cpp lists them (pci.ids, "
              "libdrm's amdgpu.ids)"},
    {.id = "mi60-32gb", .name = "MI60-32GB", .product = "AMD Radeon Instinct MI60", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "GCN5.1", .compute_capability = "gfx906", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 1024, .fp32_tflops = 14.7, .fp16_tflops = 29.5, .int8_tops = 59, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = amd, .match = "mi60",
     .source = "AMD Radeon Instinct MI60 datasheet, "
               "https://www.amd.com/system/files/documents/radeon-instinct-mi60-datasheet.pdf",
     .notes = "GCN5.1 has no matrix cores: fp16 is packed vector math (twice fp32), int8 the dot4 rate; no bf16; "
              "0x66a1 is shared by the MI50, MI60 and Radeon Pro VII and is not used; a 32 GB MI50 and an MI60 are "
              "told apart by name only (\"MI50 / MI60\" matches neither)"},
    {.id = "mi50-32gb", .name = "MI50-32GB", .product = "AMD Radeon Instinct MI50 32GB", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "GCN5.1", .compute_capability = "gfx906", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 1024, .fp32_tflops = 13.3, .fp16_tflops = 26.5, .int8_tops = 53, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = amd, .match = "mi50",
     .source = "AMD Radeon Instinct MI50 datasheet, "
               "https://www.amd.com/system/files/documents/radeon-instinct-mi50-datasheet.pdf",
     .notes = "GCN5.1 has no matrix cores: fp16 is packed vector math (twice fp32), int8 the dot4 rate; no bf16; "
              "0x66a1 is shared by the MI50, MI60 and Radeon Pro VII and is not used"},
    {.id = "mi50-16gb", .name = "MI50-16GB", .product = "AMD Radeon Instinct MI50 16GB", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "GCN5.1", .compute_capability = "gfx906", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 1024, .fp32_tflops = 13.3, .fp16_tflops = 26.5, .int8_tops = 53, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = amd, .match = "mi50",
     .source = "AMD Radeon Instinct MI50 datasheet, "
               "https://www.amd.com/system/files/documents/radeon-instinct-mi50-datasheet.pdf",
     .notes = "GCN5.1 has no matrix cores: fp16 is packed vector math (twice fp32), int8 the dot4 rate; no bf16; "
              "0x66a1 is shared by the MI50, MI60 and Radeon Pro VII and is not used"},
    {.id = "rx-6600-xt-8gb", .name = "RX-6600-XT", .product = "AMD Radeon RX 6600 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA2", .compute_capability = "gfx1032", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 256, .fp32_tflops = 10.6, .fp16_tflops = 21.2, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 160, .pci_vendor_id = amd, .match = "rx 6600 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "no matrix cores: fp32 = 32 CUs x 128 x 2.589 GHz boost, fp16 packed at twice that; no bf16"},
    {.id = "rx-6700-xt-12gb", .name = "RX-6700-XT", .product = "AMD Radeon RX 6700 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA2", .compute_capability = "gfx1031", .memory_bytes = 12 * GiB,
     .memory_bandwidth_gbps = 384, .fp32_tflops = 13.2, .fp16_tflops = 26.4, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 230, .pci_vendor_id = amd, .match = "rx 6700 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "no matrix cores: fp32 = 40 CUs x 128 x 2.581 GHz boost, fp16 packed at twice that; no bf16"},
    {.id = "rx-6800-16gb", .name = "RX-6800", .product = "AMD Radeon RX 6800", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA2", .compute_capability = "gfx1030", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 512, .fp32_tflops = 16.2, .fp16_tflops = 32.3, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 250, .pci_vendor_id = amd, .match = "rx 6800 !xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "no matrix cores: fp32 = 60 CUs x 128 x 2.105 GHz boost, fp16 packed at twice that; no bf16"},
    {.id = "rx-6800-xt-16gb", .name = "RX-6800-XT", .product = "AMD Radeon RX 6800 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA2", .compute_capability = "gfx1030", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 512, .fp32_tflops = 20.7, .fp16_tflops = 41.5, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 300, .pci_vendor_id = amd, .match = "rx 6800 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "no matrix cores: fp32 = 72 CUs x 128 x 2.25 GHz boost, fp16 packed at twice that; no bf16; the Navi "
              "21 catch-all name (\"RX 6800 / 6800 XT / 6900 XT\") matches both XT entries and stays unmatched"},
    {.id = "rx-6900-xt-16gb", .name = "RX-6900-XT", .product = "AMD Radeon RX 6900 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA2", .compute_capability = "gfx1030", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 512, .fp32_tflops = 23, .fp16_tflops = 46.1, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 300, .pci_vendor_id = amd, .match = "rx 6900 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "no matrix cores: fp32 = 80 CUs x 128 x 2.25 GHz boost, fp16 packed at twice that; no bf16"},
    {.id = "rx-6950-xt-16gb", .name = "RX-6950-XT", .product = "AMD Radeon RX 6950 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA2", .compute_capability = "gfx1030", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 576, .fp32_tflops = 23.7, .fp16_tflops = 47.3, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 335, .pci_vendor_id = amd, .match = "rx 6950 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "no matrix cores: fp32 = 80 CUs x 128 x 2.31 GHz boost, fp16 packed at twice that; no bf16"},
    {.id = "rx-7600-8gb", .name = "RX-7600", .product = "AMD Radeon RX 7600", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1102", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 288, .fp32_tflops = 21.7, .bf16_tflops = 43.5, .fp16_tflops = 43.5,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 165, .pci_vendor_id = amd, .match = "rx 7600 !xt !series",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 32 CUs x 512 x 2.655 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 32 x "
              "256 x 2.655 GHz; no fp8; int8 WMMA left empty"},
    {.id = "rx-7700-xt-12gb", .name = "RX-7700-XT", .product = "AMD Radeon RX 7700 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1101", .memory_bytes = 12 * GiB,
     .memory_bandwidth_gbps = 432, .fp32_tflops = 35.2, .bf16_tflops = 70.3, .fp16_tflops = 70.3,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 245, .pci_vendor_id = amd, .match = "rx 7700 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 54 CUs x 512 x 2.544 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 54 x "
              "256 x 2.544 GHz; no fp8; int8 WMMA left empty"},
    {.id = "rx-7800-xt-16gb", .name = "RX-7800-XT", .product = "AMD Radeon RX 7800 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1101", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 624, .fp32_tflops = 37.3, .bf16_tflops = 74.6, .fp16_tflops = 74.6,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 263, .pci_vendor_id = amd, .match = "rx 7800 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 60 CUs x 512 x 2.43 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 60 x "
              "256 x 2.43 GHz; no fp8; int8 WMMA left empty"},
    {.id = "rx-7900-gre-16gb", .name = "RX-7900-GRE", .product = "AMD Radeon RX 7900 GRE", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1100", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 576, .fp32_tflops = 46, .bf16_tflops = 92, .fp16_tflops = 92, .pcie_generation = 4,
     .pcie_width = 16, .tdp_watts = 260, .pci_vendor_id = amd, .match = "rx 7900 gre",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 80 CUs x 512 x 2.245 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 80 x "
              "256 x 2.245 GHz; no fp8; int8 WMMA left empty"},
    {.id = "rx-7900-xt-20gb", .name = "RX-7900-XT", .product = "AMD Radeon RX 7900 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1100", .memory_bytes = 20 * GiB,
     .memory_bandwidth_gbps = 800, .fp32_tflops = 51.6, .bf16_tflops = 103.2, .fp16_tflops = 103.2,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 315, .pci_vendor_id = amd, .match = "rx 7900 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 84 CUs x 512 x 2.4 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 84 x "
              "256 x 2.4 GHz; no fp8; int8 WMMA left empty"},
    {.id = "rx-7900-xtx-24gb", .name = "RX-7900-XTX", .product = "AMD Radeon RX 7900 XTX", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1100", .memory_bytes = 24 * GiB,
     .memory_bandwidth_gbps = 960, .fp32_tflops = 61.4, .bf16_tflops = 122.9, .fp16_tflops = 122.9,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 355, .pci_vendor_id = amd, .match = "rx 7900 xtx",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 96 CUs x 512 x 2.5 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 96 x "
              "256 x 2.5 GHz; no fp8; int8 WMMA left empty"},
    {.id = "rx-9060-xt-8gb", .name = "RX-9060-XT-8GB", .product = "AMD Radeon RX 9060 XT 8GB", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA4", .compute_capability = "gfx1200", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 320, .fp32_tflops = 25.6, .bf16_tflops = 102.6, .fp16_tflops = 102.6,
     .fp8_tflops = 205.1, .int8_tops = 205.1, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 150,
     .pci_vendor_id = amd, .match = "rx 9060 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "dense WMMA = 32 CUs x 3.13 GHz boost x 1024 (BF16/FP16) or 2048 (FP8/INT8) ops per CU per clock, "
              "half AMD's sparse AI TOPS; fp32 with dual issue = 32 x 256 x 3.13 GHz; the 8 GB and 16 GB models "
              "share a name; memory size tells them apart"},
    {.id = "rx-9060-xt-16gb", .name = "RX-9060-XT-16GB", .product = "AMD Radeon RX 9060 XT 16GB", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA4", .compute_capability = "gfx1200", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 320, .fp32_tflops = 25.6, .bf16_tflops = 102.6, .fp16_tflops = 102.6,
     .fp8_tflops = 205.1, .int8_tops = 205.1, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 160,
     .pci_vendor_id = amd, .match = "rx 9060 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "dense WMMA = 32 CUs x 3.13 GHz boost x 1024 (BF16/FP16) or 2048 (FP8/INT8) ops per CU per clock, "
              "half AMD's sparse AI TOPS; fp32 with dual issue = 32 x 256 x 3.13 GHz; the 8 GB and 16 GB models "
              "share a name; memory size tells them apart"},
    {.id = "rx-9070-16gb", .name = "RX-9070", .product = "AMD Radeon RX 9070", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA4", .compute_capability = "gfx1201", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 640, .fp32_tflops = 36.1, .bf16_tflops = 144.5, .fp16_tflops = 144.5, .fp8_tflops = 289,
     .int8_tops = 289, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 220, .pci_vendor_id = amd,
     .match = "rx 9070 !xt !gre !series",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "dense WMMA = 56 CUs x 2.52 GHz boost x 1024 (BF16/FP16) or 2048 (FP8/INT8) ops per CU per clock, "
              "half AMD's sparse AI TOPS; fp32 with dual issue = 56 x 256 x 2.52 GHz"},
    {.id = "rx-9070-xt-16gb", .name = "RX-9070-XT", .product = "AMD Radeon RX 9070 XT", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA4", .compute_capability = "gfx1201", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 640, .fp32_tflops = 48.7, .bf16_tflops = 194.6, .fp16_tflops = 194.6,
     .fp8_tflops = 389.3, .int8_tops = 389.3, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 304,
     .pci_vendor_id = amd, .match = "rx 9070 xt",
     .source = "AMD Radeon RX specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "dense WMMA = 64 CUs x 2.97 GHz boost x 1024 (BF16/FP16) or 2048 (FP8/INT8) ops per CU per clock, "
              "half AMD's sparse AI TOPS; fp32 with dual issue = 64 x 256 x 2.97 GHz"},
    {.id = "radeon-ai-pro-r9700-32gb", .name = "Radeon-AI-PRO-R9700", .product = "AMD Radeon AI PRO R9700",
     .vendor = "AMD", .backend = Backend::rocm, .architecture = "RDNA4", .compute_capability = "gfx1201",
     .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 640, .fp32_tflops = 47.8, .bf16_tflops = 191.4,
     .fp16_tflops = 191.4, .fp8_tflops = 382.7, .int8_tops = 382.7, .pcie_generation = 5, .pcie_width = 16,
     .tdp_watts = 300, .pci_vendor_id = amd, .match = "ai pro r9700",
     .source = "AMD Radeon AI PRO R9700 specifications, "
               "https://www.amd.com/en/products/graphics/workstations/radeon-ai-pro/ai-9000-series/"
               "amd-radeon-ai-pro-r9700.html",
     .notes = "dense WMMA = 64 CUs x 2.92 GHz x 1024 (BF16/FP16) or 2048 (FP8/INT8) ops per CU per clock, half "
              "AMD's sparse figures (383 FP16, 766 FP8 with sparsity); fp32 with dual issue = 64 x 256 x 2.92 GHz; "
              "matched by name only: its PCI id 1002:7551 is shared with the R9600D (revision C8)"},
    {.id = "radeon-pro-w6800-32gb", .name = "Radeon-PRO-W6800", .product = "AMD Radeon PRO W6800", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA2", .compute_capability = "gfx1030", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 512, .fp32_tflops = 17.8, .fp16_tflops = 35.6, .pcie_generation = 4, .pcie_width = 16,
     .tdp_watts = 250, .pci_vendor_id = amd, .match = "w6800",
     .source = "AMD Radeon PRO specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "no matrix cores: fp32 = 60 CUs x 128 x 2.32 GHz boost, fp16 packed at twice that; no bf16"},
    {.id = "radeon-pro-w7800-32gb", .name = "Radeon-PRO-W7800", .product = "AMD Radeon PRO W7800", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1100", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 576, .fp32_tflops = 45.2, .bf16_tflops = 90.5, .fp16_tflops = 90.5,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 260, .pci_vendor_id = amd, .pci_device_ids = {0x745e},
     .match = "w7800",
     .source = "AMD Radeon PRO specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 70 CUs x 512 x 2.525 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 70 x "
              "256 x 2.525 GHz; no fp8; int8 WMMA left empty; the 48 GB W7800 (0x7449) is not covered; PCI ids as "
              "modules/detect/detectors/rocm.cpp lists them (pci.ids, libdrm's amdgpu.ids)"},
    {.id = "radeon-pro-w7900-48gb", .name = "Radeon-PRO-W7900", .product = "AMD Radeon PRO W7900", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3", .compute_capability = "gfx1100", .memory_bytes = 48 * GiB,
     .memory_bandwidth_gbps = 864, .fp32_tflops = 61.3, .bf16_tflops = 122.6, .fp16_tflops = 122.6,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 295, .pci_vendor_id = amd,
     .pci_device_ids = {0x7448, 0x744a}, .match = "w7900",
     .source = "AMD Radeon PRO specifications, https://www.amd.com/en/products/graphics/desktops/radeon.html; CU "
               "count and boost clock as TechPowerUp's GPU database lists them, "
               "https://www.techpowerup.com/gpu-specs/",
     .notes = "WMMA BF16/FP16 = 96 CUs x 512 x 2.495 GHz boost (no sparsity on RDNA3); fp32 with dual issue = 96 x "
              "256 x 2.495 GHz; no fp8; int8 WMMA left empty; PCI ids as modules/detect/detectors/rocm.cpp lists "
              "them (pci.ids, libdrm's amdgpu.ids)"},
    {.id = "radeon-8060s", .name = "Radeon-8060S",
     .product = "AMD Radeon 8060S Graphics (Ryzen AI Max+ 395, Strix Halo)", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3.5", .compute_capability = "gfx1151", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 256, .fp32_tflops = 29.7, .bf16_tflops = 59.4,
     .fp16_tflops = 59.4, .tdp_watts = 120, .pci_vendor_id = amd, .match = "radeon 8060s",
     .source = "AMD Ryzen AI Max+ 395 specifications, "
               "https://www.amd.com/en/products/processors/laptop/ryzen/ai-max-series/amd-ryzen-ai-max-plus-395.html",
     .notes = "integrated GPU sharing LPDDR5X-8000 on a 256-bit bus (256 GB/s) with the CPU, up to 128 GB; "
              "derived: 40 CUs x 512 x 2.9 GHz for WMMA BF16/FP16, 40 x 256 x 2.9 GHz fp32 with dual issue; TDP is "
              "the package's configurable maximum; the 8050S/8040S parts do not match"},
    {.id = "radeon-890m", .name = "Radeon-890M",
     .product = "AMD Radeon 890M Graphics (Ryzen AI 9 HX 370, Strix Point)", .vendor = "AMD",
     .backend = Backend::rocm, .architecture = "RDNA3.5", .compute_capability = "gfx1150", .memory_bytes = 256 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 120, .fp32_tflops = 11.9, .bf16_tflops = 23.8,
     .fp16_tflops = 23.8, .tdp_watts = 54, .pci_vendor_id = amd, .match = "radeon 890m !880m",
     .source = "AMD Ryzen AI 9 HX 370 specifications, "
               "https://www.amd.com/en/products/processors/laptop/ryzen/ai-300-series/amd-ryzen-ai-9-hx-370.html",
     .notes = "integrated GPU sharing system memory (LPDDR5X-7500, 128-bit: 120 GB/s; up to 256 GB per AMD's "
              "specifications); derived: 16 CUs x 512 x 2.9 GHz for WMMA BF16/FP16, 16 x 256 x 2.9 GHz fp32 with "
              "dual issue; TDP is the package's configurable maximum; the catch-all \"880M / 890M\" name does not "
              "match"},
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
     .source = "Habana Gaudi2 white paper (2022); MME peaks from the Gaudi 2 column of the Intel Gaudi 3 white paper, "
               "https://www.intel.com/content/www/us/en/content-details/817486/intel-gaudi-3-ai-accelerator-white-paper.html",
     .notes = "matrix-engine (MME) peaks"},
    // --- Intel GPUs ---------------------------------------------------------------
    {.id = "arc-a380-6gb", .name = "Arc-A380", .product = "Intel Arc A380 Graphics", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe-HPG", .memory_bytes = 6 * GiB,
     .memory_bandwidth_gbps = 186, .fp32_tflops = 4.1, .bf16_tflops = 32.8, .fp16_tflops = 32.8, .int8_tops = 65.5,
     .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 75, .pci_vendor_id = intel, .pci_device_ids = {0x56a5},
     .match = "arc a380",
     .source = "Intel Arc A-series graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc/arc-a-series.html",
     .notes = "derived: 8 Xe-cores x 2.0 GHz graphics clock x 2048 (XMX BF16/FP16) or 4096 (XMX INT8) ops per "
              "Xe-core per clock; fp32 = 8 x 256 x 2.0 GHz; no fp8; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
    {.id = "arc-a580-8gb", .name = "Arc-A580", .product = "Intel Arc A580 Graphics", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe-HPG", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 512, .fp32_tflops = 10.4, .bf16_tflops = 83.6, .fp16_tflops = 83.6, .int8_tops = 167.1,
     .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 185, .pci_vendor_id = intel, .pci_device_ids = {0x56a2},
     .match = "arc a580",
     .source = "Intel Arc A-series graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc/arc-a-series.html",
     .notes = "derived: 24 Xe-cores x 1.7 GHz graphics clock x 2048 (XMX BF16/FP16) or 4096 (XMX INT8) ops per "
              "Xe-core per clock; fp32 = 24 x 256 x 1.7 GHz; no fp8; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
    {.id = "arc-a750-8gb", .name = "Arc-A750", .product = "Intel Arc A750 Graphics", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe-HPG", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 512, .fp32_tflops = 14.7, .bf16_tflops = 117.6, .fp16_tflops = 117.6,
     .int8_tops = 235.1, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 225, .pci_vendor_id = intel,
     .pci_device_ids = {0x56a1}, .match = "arc a750",
     .source = "Intel Arc A-series graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc/arc-a-series.html",
     .notes = "derived: 28 Xe-cores x 2.05 GHz graphics clock x 2048 (XMX BF16/FP16) or 4096 (XMX INT8) ops per "
              "Xe-core per clock; fp32 = 28 x 256 x 2.05 GHz; no fp8; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
    {.id = "arc-a770-8gb", .name = "Arc-A770-8GB", .product = "Intel Arc A770 8GB Graphics", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe-HPG", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 512, .fp32_tflops = 17.2, .bf16_tflops = 137.6, .fp16_tflops = 137.6,
     .int8_tops = 275.3, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 225, .pci_vendor_id = intel,
     .pci_device_ids = {0x56a0}, .match = "arc a770",
     .source = "Intel Arc A-series graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc/arc-a-series.html",
     .notes = "derived: 32 Xe-cores x 2.1 GHz graphics clock x 2048 (XMX BF16/FP16) or 4096 (XMX INT8) ops per "
              "Xe-core per clock; fp32 = 32 x 256 x 2.1 GHz; no fp8; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids); the 8 GB and 16 GB models share a "
              "name and id; memory size tells them apart"},
    {.id = "arc-a770-16gb", .name = "Arc-A770-16GB", .product = "Intel Arc A770 16GB Graphics", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe-HPG", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 560, .fp32_tflops = 17.2, .bf16_tflops = 137.6, .fp16_tflops = 137.6,
     .int8_tops = 275.3, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 225, .pci_vendor_id = intel,
     .pci_device_ids = {0x56a0}, .match = "arc a770",
     .source = "Intel Arc A-series graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc/arc-a-series.html",
     .notes = "derived: 32 Xe-cores x 2.1 GHz graphics clock x 2048 (XMX BF16/FP16) or 4096 (XMX INT8) ops per "
              "Xe-core per clock; fp32 = 32 x 256 x 2.1 GHz; no fp8; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids); the 8 GB and 16 GB models share a "
              "name and id; memory size tells them apart"},
    {.id = "arc-b570-10gb", .name = "Arc-B570", .product = "Intel Arc B570 Graphics", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe2-HPG", .memory_bytes = 10 * GiB,
     .memory_bandwidth_gbps = 380, .fp32_tflops = 11.5, .bf16_tflops = 101.5, .fp16_tflops = 101.5, .int8_tops = 203,
     .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 150, .pci_vendor_id = intel, .match = "arc b570",
     .source = "Intel Arc B-series graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc/arc-b-series.html",
     .notes = "INT8 is Intel's published 203 peak TOPS (XMX); BF16/FP16 at half that; fp32 = 18 Xe2-cores x 256 x "
              "2.5 GHz; PCI id not confirmed, left empty"},
    {.id = "arc-b580-12gb", .name = "Arc-B580", .product = "Intel Arc B580 Graphics", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe2-HPG", .memory_bytes = 12 * GiB,
     .memory_bandwidth_gbps = 456, .fp32_tflops = 13.7, .bf16_tflops = 116.5, .fp16_tflops = 116.5, .int8_tops = 233,
     .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 190, .pci_vendor_id = intel, .pci_device_ids = {0xe20b},
     .match = "arc b580",
     .source = "Intel Arc B-series graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc/arc-b-series.html",
     .notes = "INT8 is Intel's published 233 peak TOPS (XMX); BF16/FP16 at half that; fp32 = 20 Xe2-cores x 256 x "
              "2.67 GHz; PCI ids as modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
    {.id = "max-1550-stack-64gb", .name = "Max-1550", .product = "Intel Data Center GPU Max 1550 (one stack)",
     .vendor = "Intel", .backend = Backend::intel_oneapi, .architecture = "Xe-HPC", .memory_bytes = 64 * GiB,
     .memory_bandwidth_gbps = 1638.4, .fp32_tflops = 26.2, .bf16_tflops = 419.4, .fp16_tflops = 419.4,
     .int8_tops = 838.9, .pcie_generation = 5, .pcie_width = 16, .pci_vendor_id = intel,
     .pci_device_ids = {0x0bd5, 0x0bd6}, .match = "gpu max 1550", .devices_per_package = 2,
     .source = "Intel Data Center GPU Max Series specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/data-center-gpu/max-series.htm"
               "l",
     .notes = "figures per stack, the device Level Zero shows in its default FLAT mode: the OAM module (128 GB "
              "HBM2e, 3.2768 TB/s, 128 Xe-cores at 1.6 GHz: 839 TFLOPS BF16/FP16, 1678 TOPS INT8 dense, 52.4 "
              "TFLOPS fp32, 600 W) is two devices; in COMPOSITE mode the 128 GB device does not match; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
    {.id = "max-1100-48gb", .name = "Max-1100", .product = "Intel Data Center GPU Max 1100", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe-HPC", .memory_bytes = 48 * GiB,
     .memory_bandwidth_gbps = 1228.8, .fp32_tflops = 22.2, .bf16_tflops = 355.5, .fp16_tflops = 355.5,
     .int8_tops = 711, .pcie_generation = 5, .pcie_width = 16, .tdp_watts = 300, .pci_vendor_id = intel,
     .pci_device_ids = {0x0bd9, 0x0bda, 0x0bdb}, .match = "gpu max 1100",
     .source = "Intel Data Center GPU Max Series specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/data-center-gpu/max-series.htm"
               "l",
     .notes = "derived: 56 Xe-cores x 1.55 GHz x 4096 (XMX BF16/FP16) or 8192 (INT8) ops per Xe-core per clock; "
              "fp32 = 56 x 256 x 1.55 GHz; an Xe Link bridge is optional and not assumed; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
    {.id = "flex-170-16gb", .name = "Flex-170", .product = "Intel Data Center GPU Flex 170", .vendor = "Intel",
     .backend = Backend::intel_oneapi, .architecture = "Xe-HPG", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 576, .fp32_tflops = 16.8, .bf16_tflops = 134.3, .fp16_tflops = 134.3,
     .int8_tops = 268.7, .pcie_generation = 4, .pcie_width = 16, .tdp_watts = 150, .pci_vendor_id = intel,
     .pci_device_ids = {0x56c0}, .match = "gpu flex 170",
     .source = "Intel Data Center GPU Flex Series specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/data-center-gpu/flex-series.ht"
               "ml",
     .notes = "derived: 32 Xe-cores x 2.05 GHz (maximum dynamic clock) x 2048 (XMX BF16/FP16) or 4096 (INT8) ops "
              "per Xe-core per clock; sustained clocks under the 150 W limit are lower; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
    {.id = "flex-140-gpu-6gb", .name = "Flex-140", .product = "Intel Data Center GPU Flex 140 (one of its two GPUs)",
     .vendor = "Intel", .backend = Backend::intel_oneapi, .architecture = "Xe-HPG", .memory_bytes = 6 * GiB,
     .memory_bandwidth_gbps = 168, .fp32_tflops = 3.99, .bf16_tflops = 31.9, .fp16_tflops = 31.9, .int8_tops = 63.9,
     .pcie_generation = 4, .pcie_width = 8, .pci_vendor_id = intel, .pci_device_ids = {0x56c1},
     .match = "gpu flex 140", .devices_per_package = 2,
     .source = "Intel Data Center GPU Flex Series specifications, "
               "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/data-center-gpu/flex-series.ht"
               "ml",
     .notes = "figures per GPU: the 75 W card (12 GB GDDR6) is two devices of 8 Xe-cores at up to 1.95 GHz; "
              "derived at 2048 (XMX BF16/FP16) or 4096 (INT8) ops per Xe-core per clock; PCI ids as "
              "modules/detect/detectors/intel_oneapi.cpp lists them (pci.ids)"},
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
    {.id = "tpu-v7", .name = "TPU-v7", .product = "Google Cloud TPU7x (Ironwood)", .vendor = "Google",
     .backend = Backend::tpu, .family = Family::tpu, .architecture = "TPU v7", .compute_capability = "v7",
     .memory_bytes = 192 * GiB, .memory_bandwidth_gbps = 7370, .bf16_tflops = 2307, .fp8_tflops = 4614,
     .fabric = FabricSpec{"ici", "ICI, 3D torus (1.2 TB/s bidirectional per chip)", 600.0, 9216},
     .match = "v7|v7x|tpu7x|ironwood",
     .source = "Cloud TPU7x (Ironwood) documentation, https://docs.cloud.google.com/tpu/docs/tpu7x",
     .notes = "per chip (two TensorCores); HBM bandwidth 7.37 TB/s and ICI 1.2 TB/s bidirectional as Google's "
              "Ironwood announcement gives them; a pod is 9216 chips"},
    {.id = "tpu-v3", .name = "TPU-v3", .product = "Google Cloud TPU v3", .vendor = "Google", .backend = Backend::tpu,
     .family = Family::tpu, .architecture = "TPU v3", .compute_capability = "v3", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 900, .bf16_tflops = 123,
     .fabric = FabricSpec{"ici", "ICI, 2D torus", std::nullopt, 1024}, .match = "v3",
     .source = "Cloud TPU v3 documentation, https://cloud.google.com/tpu/docs/v3",
     .notes = "per chip (two TensorCores of 16 GiB each); a pod is 1024 chips; per-chip ICI bandwidth not published"},
    {.id = "tpu-v2", .name = "TPU-v2", .product = "Google Cloud TPU v2", .vendor = "Google", .backend = Backend::tpu,
     .family = Family::tpu, .architecture = "TPU v2", .compute_capability = "v2", .memory_bytes = 16 * GiB,
     .memory_bandwidth_gbps = 600, .bf16_tflops = 45, .fabric = FabricSpec{"ici", "ICI, 2D torus", std::nullopt, 256},
     .match = "v2", .source = "Cloud TPU v2 documentation, https://cloud.google.com/tpu/docs/v2",
     .notes = "per chip (two TensorCores of 8 GiB each); a pod is 256 chips; per-chip ICI bandwidth not published"},
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
    {.id = "trainium3-144gb", .name = "Trainium3", .product = "AWS Trainium3", .vendor = "AWS",
     .backend = Backend::aws_neuron, .family = Family::asic, .architecture = "NeuronCore-v4",
     .memory_bytes = 144 * GiB, .memory_bandwidth_gbps = 4900, .fp32_tflops = 183, .bf16_tflops = 671,
     .fp16_tflops = 671, .fp8_tflops = 2517,
     .fabric = FabricSpec{"neuronlink", "NeuronLink-v4 (2.56 TB/s per device)", std::nullopt, 144},
     .match = "trainium3|trn3",
     .source = "AWS Neuron documentation, Trainium3 architecture, "
               "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware/trainium3.h"
               "tml",
     .notes = "fp8 is the dense MXFP8 rate (2517 TFLOPS), 3.75x BF16 on NeuronCore-v4, not a sparse figure; the "
              "NKI guide gives 4.7 TB/s HBM bandwidth where the architecture page gives 4.9; NeuronLink-v4's "
              "per-direction bandwidth is not stated; the domain is a Trn3 UltraServer's 144 chips"},
    {.id = "inferentia-8gb", .name = "Inferentia", .product = "AWS Inferentia", .vendor = "AWS",
     .backend = Backend::aws_neuron, .family = Family::asic, .architecture = "NeuronCore-v1", .memory_bytes = 8 * GiB,
     .memory_bandwidth_gbps = 50, .bf16_tflops = 64, .fp16_tflops = 64, .int8_tops = 128,
     .fabric = FabricSpec{"neuronlink", "NeuronLink-v1 (chip-to-chip pipeline)", std::nullopt, 16},
     .match = "inferentia|inf1",
     .source = "AWS Neuron documentation, Inferentia architecture, "
               "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia.html",
     .notes = "four NeuronCore-v1 per chip; 8 GiB DDR4 at 50 GiB/s; NeuronLink-v1 joins the 16 chips of an "
              "inf1.24xlarge (32 GiB/s per chip)"},
    // --- Qualcomm ---------------------------------------------------------------------
    {.id = "cloud-ai-100-standard-16gb", .name = "Cloud-AI-100-Standard", .product = "Qualcomm Cloud AI 100 Standard",
     .vendor = "Qualcomm", .backend = Backend::qualcomm, .family = Family::asic, .architecture = "Cloud AI 100",
     .memory_bytes = 16 * GiB, .memory_bandwidth_gbps = 137, .fp16_tflops = 110, .int8_tops = 325,
     .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 75, .match = "cloud ai 100",
     .source = "Qualcomm Cloud AI SDK documentation, Architecture, "
               "https://quic.github.io/cloud-ai-sdk-pages/latest/Getting-Started/Architecture",
     .notes = "one AI 100 SoC (LPDDR4x); the detected name (\"Qualcomm Cloud AI 100\") does not say the SKU: 16 GB "
              "is this one"},
    {.id = "cloud-ai-100-pro-32gb", .name = "Cloud-AI-100-Pro", .product = "Qualcomm Cloud AI 100 Pro",
     .vendor = "Qualcomm", .backend = Backend::qualcomm, .family = Family::asic, .architecture = "Cloud AI 100",
     .memory_bytes = 32 * GiB, .memory_bandwidth_gbps = 137, .fp16_tflops = 125, .int8_tops = 375,
     .pcie_generation = 4, .pcie_width = 8, .tdp_watts = 75, .match = "cloud ai 100",
     .source = "Qualcomm Cloud AI SDK documentation, Architecture, "
               "https://quic.github.io/cloud-ai-sdk-pages/latest/Getting-Started/Architecture",
     .notes = "one AI 100 SoC; a 32 GB SoC may be this card or one of an Ultra's four, which the detected name "
              "cannot tell apart, so it stays unmatched (choose it with --devices)"},
    {.id = "cloud-ai-100-ultra-soc-32gb", .name = "Cloud-AI-100-Ultra",
     .product = "Qualcomm Cloud AI 100 Ultra (one of its four SoCs)", .vendor = "Qualcomm",
     .backend = Backend::qualcomm, .family = Family::asic, .architecture = "Cloud AI 100", .memory_bytes = 32 * GiB,
     .memory_bandwidth_gbps = 137, .fp16_tflops = 72.5, .int8_tops = 217.5, .pcie_generation = 4, .pcie_width = 8,
     .match = "cloud ai 100", .devices_per_package = 4,
     .source = "Qualcomm Cloud AI SDK documentation, Architecture, "
               "https://quic.github.io/cloud-ai-sdk-pages/latest/Getting-Started/Architecture",
     .notes = "figures per SoC: the 150 W card (128 GB, 548 GB/s, 290 TFLOPS FP16, 870 TOPS INT8) is four devices "
              "behind a PCIe switch (Gen4 x16 to the host, x8 to each SoC); unmatched by name like the Pro (see "
              "there); the Cloud AI 080 is not in Qualcomm's SDK table and is not covered"},
    // --- Apple (unified memory; GPU figures) --------------------------------------------
    {.id = "apple-m1", .name = "M1", .product = "Apple M1 (8-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 16 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 68.25, .fp32_tflops = 2.6, .fp16_tflops = 2.6,
     .match = "m1 !pro !max !ultra", .memory_options_gib = {8, 16},
     
     .source = "Apple newsroom, Apple unleashes M1 (2020-11-10), "
               "https://www.apple.com/newsroom/2020/11/apple-unleashes-m1/",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; the M1 GPU has no bf16 arithmetic"},
    {.id = "apple-m1-pro", .name = "M1-Pro", .product = "Apple M1 Pro (16-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 5.2, .fp16_tflops = 5.2,
     .match = "m1 pro", .memory_options_gib = {16, 32},
     
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18), "
               "https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-apple-has-ever-built/",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; no bf16 arithmetic"},
    {.id = "apple-m1-max", .name = "M1-Max", .product = "Apple M1 Max (32-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 10.4, .fp16_tflops = 10.4,
     .match = "m1 max", .memory_options_gib = {32, 64},
     
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18), "
               "https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-apple-has-ever-built/",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; no bf16 arithmetic"},
    {.id = "apple-m1-ultra", .name = "M1-Ultra", .product = "Apple M1 Ultra (64-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 21, .fp16_tflops = 21,
     .match = "m1 ultra", .memory_options_gib = {64, 128},
     
     .source = "Apple newsroom, Apple unveils M1 Ultra (2022-03-08), "
               "https://www.apple.com/newsroom/2022/03/apple-unveils-m1-ultra-the-worlds-most-powerful-chip-for-a-personal-computer/",
     .notes = "fp16 runs at the fp32 rate on Apple GPUs; no bf16 arithmetic"},
    {.id = "apple-m2", .name = "M2", .product = "Apple M2 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .fp32_tflops = 3.6, .bf16_tflops = 3.6,
     .fp16_tflops = 3.6, .match = "m2 !pro !max !ultra", .memory_options_gib = {8, 16, 24},
     
     .source = "Apple newsroom, Apple unveils M2 (2022-06-06), "
               "https://www.apple.com/newsroom/2022/06/apple-unveils-m2-with-breakthrough-performance-and-capabilities/",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m2-pro", .name = "M2-Pro", .product = "Apple M2 Pro (19-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 6.8, .bf16_tflops = 6.8,
     .fp16_tflops = 6.8, .match = "m2 pro", .memory_options_gib = {16, 32},
     
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17), "
               "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-next-level-workflows/",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m2-max", .name = "M2-Max", .product = "Apple M2 Max (38-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 96 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 13.6, .bf16_tflops = 13.6,
     .fp16_tflops = 13.6, .match = "m2 max", .memory_options_gib = {32, 64, 96},
     
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17), "
               "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-next-level-workflows/",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m2-ultra", .name = "M2-Ultra", .product = "Apple M2 Ultra (76-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 192 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 27.2, .bf16_tflops = 27.2,
     .fp16_tflops = 27.2, .match = "m2 ultra", .memory_options_gib = {64, 128, 192},
     
     .source = "Apple newsroom, Apple introduces M2 Ultra (2023-06-05), "
               "https://www.apple.com/newsroom/2023/06/apple-introduces-m2-ultra/",
     .notes = "fp16 and bf16 run at the fp32 rate on Apple GPUs"},
    {.id = "apple-m3", .name = "M3", .product = "Apple M3 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .match = "m3 !pro !max !ultra",
     .memory_options_gib = {8, 16, 24},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family"},
    {.id = "apple-m3-pro", .name = "M3-Pro", .product = "Apple M3 Pro (18-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 36 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 150, .match = "m3 pro",
     .memory_options_gib = {18, 36},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family"},
    {.id = "apple-m3-max", .name = "M3-Max", .product = "Apple M3 Max (40-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .match = "m3 max",
     .memory_options_gib = {36, 48, 64, 96, 128},
     
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for-a-personal-computer/",
     .notes = "the 40-core GPU part; the 30-core part has 300 GB/s; no published TFLOPS"},
    {.id = "apple-m3-ultra", .name = "M3-Ultra", .product = "Apple M3 Ultra (80-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 512 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 819, .match = "m3 ultra",
     .memory_options_gib = {96, 256, 512},
     .source = "Apple newsroom, Apple reveals M3 Ultra (2025-03-05), "
               "https://www.apple.com/newsroom/2025/03/apple-reveals-m3-ultra-taking-apple-silicon-to-a-new-extreme/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family"},
    {.id = "apple-m4", .name = "M4", .product = "Apple M4 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 120, .match = "m4 !pro !max !ultra",
     .memory_options_gib = {16, 24, 32},
     .source = "Apple newsroom, Apple introduces M4 chip (2024-05-07), "
               "https://www.apple.com/newsroom/2024/05/apple-introduces-m4-chip/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family"},
    {.id = "apple-m4-pro", .name = "M4-Pro", .product = "Apple M4 Pro (20-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 273, .match = "m4 pro",
     .memory_options_gib = {24, 48, 64},
     
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30), "
               "https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family"},
    {.id = "apple-m4-max", .name = "M4-Max", .product = "Apple M4 Max (40-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 546, .match = "m4 max",
     .memory_options_gib = {36, 48, 64, 128},
     
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30), "
               "https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
     .notes = "the 40-core GPU part; the 32-core part has 410 GB/s; no published TFLOPS"},
    {.id = "apple-m1-7c", .name = "M1-7c", .product = "Apple M1 (7-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 16 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 68.25, .fp32_tflops = 2.29, .fp16_tflops = 2.29,
     .match = by_name_only, .memory_options_gib = {8, 16},
     .source = "Apple newsroom, Apple unleashes M1 (2020-11-10), "
               "https://www.apple.com/newsroom/2020/11/apple-unleashes-m1/",
     .notes = "fp32 = 7 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-7c): macOS names the chip (\"Apple M1\") and reports the core "
              "count separately, which the matcher does not see, so a detected chip matches the M1 entry and never "
              "this one"},
    {.id = "apple-m1-8c", .name = "M1-8c", .product = "Apple M1 (8-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 16 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 68.25, .fp32_tflops = 2.62, .fp16_tflops = 2.62,
     .match = by_name_only, .memory_options_gib = {8, 16},
     .source = "Apple newsroom, Apple unleashes M1 (2020-11-10), "
               "https://www.apple.com/newsroom/2020/11/apple-unleashes-m1/",
     .notes = "fp32 = 8 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-8c): macOS names the chip (\"Apple M1\") and reports the core "
              "count separately, which the matcher does not see, so a detected chip matches the M1 entry and never "
              "this one"},
    {.id = "apple-m1-pro-14c", .name = "M1-Pro-14c", .product = "Apple M1 Pro (14-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 4.58, .fp16_tflops = 4.58,
     .match = by_name_only, .memory_options_gib = {16, 32},
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18), "
               "https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-apple-ha"
               "s-ever-built/",
     .notes = "fp32 = 14 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-Pro-14c): macOS names the chip (\"Apple M1 Pro\") and reports "
              "the core count separately, which the matcher does not see, so a detected chip matches the M1-Pro "
              "entry and never this one"},
    {.id = "apple-m1-pro-16c", .name = "M1-Pro-16c", .product = "Apple M1 Pro (16-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 5.23, .fp16_tflops = 5.23,
     .match = by_name_only, .memory_options_gib = {16, 32},
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18), "
               "https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-apple-ha"
               "s-ever-built/",
     .notes = "fp32 = 16 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-Pro-16c): macOS names the chip (\"Apple M1 Pro\") and reports "
              "the core count separately, which the matcher does not see, so a detected chip matches the M1-Pro "
              "entry and never this one"},
    {.id = "apple-m1-max-24c", .name = "M1-Max-24c", .product = "Apple M1 Max (24-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 7.85, .fp16_tflops = 7.85,
     .match = by_name_only, .memory_options_gib = {32, 64},
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18), "
               "https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-apple-ha"
               "s-ever-built/",
     .notes = "fp32 = 24 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-Max-24c): macOS names the chip (\"Apple M1 Max\") and reports "
              "the core count separately, which the matcher does not see, so a detected chip matches the M1-Max "
              "entry and never this one"},
    {.id = "apple-m1-max-32c", .name = "M1-Max-32c", .product = "Apple M1 Max (32-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 10.5, .fp16_tflops = 10.5,
     .match = by_name_only, .memory_options_gib = {32, 64},
     .source = "Apple newsroom, Introducing M1 Pro and M1 Max (2021-10-18), "
               "https://www.apple.com/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-apple-ha"
               "s-ever-built/",
     .notes = "fp32 = 32 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-Max-32c): macOS names the chip (\"Apple M1 Max\") and reports "
              "the core count separately, which the matcher does not see, so a detected chip matches the M1-Max "
              "entry and never this one"},
    {.id = "apple-m1-ultra-48c", .name = "M1-Ultra-48c", .product = "Apple M1 Ultra (48-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 15.7, .fp16_tflops = 15.7,
     .match = by_name_only, .memory_options_gib = {64, 128},
     .source = "Apple newsroom, Apple unveils M1 Ultra (2022-03-08), "
               "https://www.apple.com/newsroom/2022/03/apple-unveils-m1-ultra-the-worlds-most-powerful-chip-for-a-per"
               "sonal-computer/",
     .notes = "fp32 = 48 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-Ultra-48c): macOS names the chip (\"Apple M1 Ultra\") and "
              "reports the core count separately, which the matcher does not see, so a detected chip matches the "
              "M1-Ultra entry and never this one"},
    {.id = "apple-m1-ultra-64c", .name = "M1-Ultra-64c", .product = "Apple M1 Ultra (64-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M1", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 20.9, .fp16_tflops = 20.9,
     .match = by_name_only, .memory_options_gib = {64, 128},
     .source = "Apple newsroom, Apple unveils M1 Ultra (2022-03-08), "
               "https://www.apple.com/newsroom/2022/03/apple-unveils-m1-ultra-the-worlds-most-powerful-chip-for-a-per"
               "sonal-computer/",
     .notes = "fp32 = 64 cores x 128 ALUs x 2 x 1.278 GHz; fp16 at the fp32 rate; no bf16 arithmetic; a GPU-core "
              "variant chosen by name (--devices M1-Ultra-64c): macOS names the chip (\"Apple M1 Ultra\") and "
              "reports the core count separately, which the matcher does not see, so a detected chip matches the "
              "M1-Ultra entry and never this one"},
    {.id = "apple-m2-8c", .name = "M2-8c", .product = "Apple M2 (8-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .fp32_tflops = 2.86, .bf16_tflops = 2.86,
     .fp16_tflops = 2.86, .match = by_name_only, .memory_options_gib = {8, 16, 24},
     .source = "Apple newsroom, Apple unveils M2 (2022-06-06), "
               "https://www.apple.com/newsroom/2022/06/apple-unveils-m2-with-breakthrough-performance-and-capabilitie"
               "s/",
     .notes = "fp32 = 8 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-8c): macOS names the chip (\"Apple M2\") and reports the core count "
              "separately, which the matcher does not see, so a detected chip matches the M2 entry and never this "
              "one"},
    {.id = "apple-m2-10c", .name = "M2-10c", .product = "Apple M2 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .fp32_tflops = 3.58, .bf16_tflops = 3.58,
     .fp16_tflops = 3.58, .match = by_name_only, .memory_options_gib = {8, 16, 24},
     .source = "Apple newsroom, Apple unveils M2 (2022-06-06), "
               "https://www.apple.com/newsroom/2022/06/apple-unveils-m2-with-breakthrough-performance-and-capabilitie"
               "s/",
     .notes = "fp32 = 10 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-10c): macOS names the chip (\"Apple M2\") and reports the core count "
              "separately, which the matcher does not see, so a detected chip matches the M2 entry and never this "
              "one"},
    {.id = "apple-m2-pro-16c", .name = "M2-Pro-16c", .product = "Apple M2 Pro (16-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 5.73, .bf16_tflops = 5.73,
     .fp16_tflops = 5.73, .match = by_name_only, .memory_options_gib = {16, 32},
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17), "
               "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-next"
               "-level-workflows/",
     .notes = "fp32 = 16 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-Pro-16c): macOS names the chip (\"Apple M2 Pro\") and reports the core "
              "count separately, which the matcher does not see, so a detected chip matches the M2-Pro entry and "
              "never this one"},
    {.id = "apple-m2-pro-19c", .name = "M2-Pro-19c", .product = "Apple M2 Pro (19-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 200, .fp32_tflops = 6.8, .bf16_tflops = 6.8,
     .fp16_tflops = 6.8, .match = by_name_only, .memory_options_gib = {16, 32},
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17), "
               "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-next"
               "-level-workflows/",
     .notes = "fp32 = 19 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-Pro-19c): macOS names the chip (\"Apple M2 Pro\") and reports the core "
              "count separately, which the matcher does not see, so a detected chip matches the M2-Pro entry and "
              "never this one"},
    {.id = "apple-m2-max-30c", .name = "M2-Max-30c", .product = "Apple M2 Max (30-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 10.7, .bf16_tflops = 10.7,
     .fp16_tflops = 10.7, .match = by_name_only, .memory_options_gib = {32, 64},
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17), "
               "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-next"
               "-level-workflows/",
     .notes = "fp32 = 30 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-Max-30c): macOS names the chip (\"Apple M2 Max\") and reports the core "
              "count separately, which the matcher does not see, so a detected chip matches the M2-Max entry and "
              "never this one"},
    {.id = "apple-m2-max-38c", .name = "M2-Max-38c", .product = "Apple M2 Max (38-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 96 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .fp32_tflops = 13.6, .bf16_tflops = 13.6,
     .fp16_tflops = 13.6, .match = by_name_only, .memory_options_gib = {32, 64, 96},
     .source = "Apple newsroom, Apple unveils M2 Pro and M2 Max (2023-01-17), "
               "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-next"
               "-level-workflows/",
     .notes = "fp32 = 38 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-Max-38c): macOS names the chip (\"Apple M2 Max\") and reports the core "
              "count separately, which the matcher does not see, so a detected chip matches the M2-Max entry and "
              "never this one"},
    {.id = "apple-m2-ultra-60c", .name = "M2-Ultra-60c", .product = "Apple M2 Ultra (60-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 192 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 21.5, .bf16_tflops = 21.5,
     .fp16_tflops = 21.5, .match = by_name_only, .memory_options_gib = {64, 128, 192},
     .source = "Apple newsroom, Apple introduces M2 Ultra (2023-06-05), "
               "https://www.apple.com/newsroom/2023/06/apple-introduces-m2-ultra/",
     .notes = "fp32 = 60 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-Ultra-60c): macOS names the chip (\"Apple M2 Ultra\") and reports the "
              "core count separately, which the matcher does not see, so a detected chip matches the M2-Ultra "
              "entry and never this one"},
    {.id = "apple-m2-ultra-76c", .name = "M2-Ultra-76c", .product = "Apple M2 Ultra (76-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M2", .memory_bytes = 192 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 800, .fp32_tflops = 27.2, .bf16_tflops = 27.2,
     .fp16_tflops = 27.2, .match = by_name_only, .memory_options_gib = {64, 128, 192},
     .source = "Apple newsroom, Apple introduces M2 Ultra (2023-06-05), "
               "https://www.apple.com/newsroom/2023/06/apple-introduces-m2-ultra/",
     .notes = "fp32 = 76 cores x 128 ALUs x 2 x 1.398 GHz; fp16 and bf16 at the fp32 rate; a GPU-core variant "
              "chosen by name (--devices M2-Ultra-76c): macOS names the chip (\"Apple M2 Ultra\") and reports the "
              "core count separately, which the matcher does not see, so a detected chip matches the M2-Ultra "
              "entry and never this one"},
    {.id = "apple-m3-8c", .name = "M3-8c", .product = "Apple M3 (8-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .match = by_name_only,
     .memory_options_gib = {8, 16, 24},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for"
               "-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-8c): macOS names the chip (\"Apple M3\") and reports the core count separately, which the matcher "
              "does not see, so a detected chip matches the M3 entry and never this one"},
    {.id = "apple-m3-10c", .name = "M3-10c", .product = "Apple M3 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 24 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 100, .match = by_name_only,
     .memory_options_gib = {8, 16, 24},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for"
               "-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-10c): macOS names the chip (\"Apple M3\") and reports the core count separately, which the matcher "
              "does not see, so a detected chip matches the M3 entry and never this one"},
    {.id = "apple-m3-pro-14c", .name = "M3-Pro-14c", .product = "Apple M3 Pro (14-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 36 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 150, .match = by_name_only,
     .memory_options_gib = {18, 36},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for"
               "-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-Pro-14c): macOS names the chip (\"Apple M3 Pro\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M3-Pro entry and never this one"},
    {.id = "apple-m3-pro-18c", .name = "M3-Pro-18c", .product = "Apple M3 Pro (18-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 36 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 150, .match = by_name_only,
     .memory_options_gib = {18, 36},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for"
               "-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-Pro-18c): macOS names the chip (\"Apple M3 Pro\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M3-Pro entry and never this one"},
    {.id = "apple-m3-max-30c", .name = "M3-Max-30c", .product = "Apple M3 Max (30-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 96 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 300, .match = by_name_only,
     .memory_options_gib = {36, 96},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for"
               "-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-Max-30c): macOS names the chip (\"Apple M3 Max\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M3-Max entry and never this one"},
    {.id = "apple-m3-max-40c", .name = "M3-Max-40c", .product = "Apple M3 Max (40-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 400, .match = by_name_only,
     .memory_options_gib = {48, 64, 128},
     .source = "Apple newsroom, Apple unveils M3, M3 Pro and M3 Max (2023-10-30), "
               "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for"
               "-a-personal-computer/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-Max-40c): macOS names the chip (\"Apple M3 Max\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M3-Max entry and never this one"},
    {.id = "apple-m3-ultra-60c", .name = "M3-Ultra-60c", .product = "Apple M3 Ultra (60-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 256 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 819, .match = by_name_only,
     .memory_options_gib = {96, 256},
     .source = "Apple newsroom, Apple reveals M3 Ultra (2025-03-05), "
               "https://www.apple.com/newsroom/2025/03/apple-reveals-m3-ultra-taking-apple-silicon-to-a-new-extreme/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-Ultra-60c): macOS names the chip (\"Apple M3 Ultra\") and reports the core count separately, which "
              "the matcher does not see, so a detected chip matches the M3-Ultra entry and never this one"},
    {.id = "apple-m3-ultra-80c", .name = "M3-Ultra-80c", .product = "Apple M3 Ultra (80-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M3", .memory_bytes = 512 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 819, .match = by_name_only,
     .memory_options_gib = {96, 256, 512},
     .source = "Apple newsroom, Apple reveals M3 Ultra (2025-03-05), "
               "https://www.apple.com/newsroom/2025/03/apple-reveals-m3-ultra-taking-apple-silicon-to-a-new-extreme/",
     .notes = "Apple publishes no TFLOPS figure for the M3 family; a GPU-core variant chosen by name (--devices "
              "M3-Ultra-80c): macOS names the chip (\"Apple M3 Ultra\") and reports the core count separately, which "
              "the matcher does not see, so a detected chip matches the M3-Ultra entry and never this one"},
    {.id = "apple-m4-8c", .name = "M4-8c", .product = "Apple M4 (8-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 120, .match = by_name_only,
     .memory_options_gib = {16, 24, 32},
     .source = "Apple newsroom, Apple introduces M4 chip (2024-05-07), "
               "https://www.apple.com/newsroom/2024/05/apple-introduces-m4-chip/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family; a GPU-core variant chosen by name (--devices "
              "M4-8c): macOS names the chip (\"Apple M4\") and reports the core count separately, which the matcher "
              "does not see, so a detected chip matches the M4 entry and never this one"},
    {.id = "apple-m4-10c", .name = "M4-10c", .product = "Apple M4 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 120, .match = by_name_only,
     .memory_options_gib = {16, 24, 32},
     .source = "Apple newsroom, Apple introduces M4 chip (2024-05-07), "
               "https://www.apple.com/newsroom/2024/05/apple-introduces-m4-chip/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family; a GPU-core variant chosen by name (--devices "
              "M4-10c): macOS names the chip (\"Apple M4\") and reports the core count separately, which the matcher "
              "does not see, so a detected chip matches the M4 entry and never this one"},
    {.id = "apple-m4-pro-16c", .name = "M4-Pro-16c", .product = "Apple M4 Pro (16-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 48 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 273, .match = by_name_only,
     .memory_options_gib = {24, 48},
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30), "
               "https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family; a GPU-core variant chosen by name (--devices "
              "M4-Pro-16c): macOS names the chip (\"Apple M4 Pro\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M4-Pro entry and never this one"},
    {.id = "apple-m4-pro-20c", .name = "M4-Pro-20c", .product = "Apple M4 Pro (20-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 64 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 273, .match = by_name_only,
     .memory_options_gib = {24, 48, 64},
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30), "
               "https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family; a GPU-core variant chosen by name (--devices "
              "M4-Pro-20c): macOS names the chip (\"Apple M4 Pro\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M4-Pro entry and never this one"},
    {.id = "apple-m4-max-32c", .name = "M4-Max-32c", .product = "Apple M4 Max (32-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 36 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 410, .match = by_name_only,
     .memory_options_gib = {36},
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30), "
               "https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family; a GPU-core variant chosen by name (--devices "
              "M4-Max-32c): macOS names the chip (\"Apple M4 Max\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M4-Max entry and never this one"},
    {.id = "apple-m4-max-40c", .name = "M4-Max-40c", .product = "Apple M4 Max (40-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M4", .memory_bytes = 128 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 546, .match = by_name_only,
     .memory_options_gib = {48, 64, 128},
     .source = "Apple newsroom, Apple introduces M4 Pro and M4 Max (2024-10-30), "
               "https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/",
     .notes = "Apple publishes no TFLOPS figure for the M4 family; a GPU-core variant chosen by name (--devices "
              "M4-Max-40c): macOS names the chip (\"Apple M4 Max\") and reports the core count separately, which the "
              "matcher does not see, so a detected chip matches the M4-Max entry and never this one"},
    {.id = "apple-m5", .name = "M5", .product = "Apple M5 (10-core GPU)", .vendor = "Apple",
     .backend = Backend::apple, .architecture = "Apple M5", .memory_bytes = 32 * GiB,
     .memory_kind = MemoryKind::unified, .memory_bandwidth_gbps = 153, .match = "m5 !pro !max !ultra",
     .memory_options_gib = {16, 24, 32},
     .source = "Apple newsroom, Apple unleashes M5 (2025-10-15), "
               "https://www.apple.com/newsroom/2025/10/apple-unleashes-m5-the-next-big-leap-in-ai-performance-for-app"
               "le-silicon/",
     .notes = "Apple publishes no TFLOPS figure for the M5 GPU (it gives AI speed-ups relative to M4 only)"},
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

namespace {

// match_spec over one table (the built-in one, or a user file's entries).
const DeviceSpec* match_in(std::span<const DeviceSpec> table, const SpecQuery& q) noexcept {
  std::vector<const DeviceSpec*> candidates;
  if (q.pci_vendor_id && q.pci_device_id) {
    for (const auto& s : table)
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
    for (const auto& s : table) consider(s);
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

void write_spec(json::Writer& w, const DeviceSpec& s, std::string_view user_file) {
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
  if (!user_file.empty()) w.field("user_file", user_file);
  w.end_object();
}

}  // namespace

const DeviceSpec* match_spec(const SpecQuery& q) noexcept { return match_in(specs, q); }

const DeviceSpec* match_spec(const SpecQuery& q, const DeviceSpecSet& extra) noexcept {
  if (const DeviceSpec* s = match_in(specs, q)) return s;
  return extra.empty() ? nullptr : match_in(extra.specs(), q);
}

const DeviceSpec* match_spec(const DeviceProfile& d, const DeviceSpecSet& extra) noexcept {
  if (d.family == Family::cpu) return nullptr;
  return match_spec(spec_query_of(d), extra);
}

const DeviceSpec* find_spec(std::string_view key, const DeviceSpecSet& extra) noexcept {
  if (const DeviceSpec* s = find_spec(key)) return s;
  key = text::trim(key);
  if (key.empty()) return nullptr;
  for (const auto& s : extra.specs())
    if (s.id == key || text::same_identifier(s.id, key) || text::same_identifier(s.name, key)) return &s;
  return nullptr;
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

std::string device_specs_json() { return device_specs_json(DeviceSpecSet()); }

std::string device_specs_json(const DeviceSpecSet& extra) {
  json::Writer w(false);
  w.begin_array();
  for (const auto& s : device_specs()) write_spec(w, s, {});
  for (const auto& s : extra.specs())
    if (!find_spec(s.id)) write_spec(w, s, extra.origin());  // a restated built-in entry is listed once, above
  w.end_array();
  return std::string(w.str());
}

}  // namespace hwaccel
