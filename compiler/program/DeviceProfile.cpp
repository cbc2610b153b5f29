//===- DeviceProfile.cpp --------------------------------------------------===//

#include "compiler/program/DeviceProfile.h"

#include "compiler/support/Printable.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <charconv>

using namespace pipec;

namespace {
/// Every numeric key of a profile, read and written from this one list.
struct NumberKey {
  const char *key;
  double DeviceProfile::*field;
  double min, max;
};
struct CountKey {
  const char *key;
  unsigned DeviceProfile::*field;
  double min, max;
};
const NumberKey kNumberKeys[] = {
    {"h2d_GBps", &DeviceProfile::h2dGBps, 1e-3, 1e5},
    {"d2h_GBps", &DeviceProfile::d2hGBps, 1e-3, 1e5},
    {"d2d_GBps", &DeviceProfile::d2dGBps, 1e-3, 1e5},
    {"memory_GBps", &DeviceProfile::memoryGBps, 1e-3, 1e6},
    {"pageable_GBps", &DeviceProfile::pageableGBps, 1e-3, 1e5},
    {"p2p_GBps", &DeviceProfile::p2pGBps, 1e-3, 1e5},
    {"nccl_bus_GBps", &DeviceProfile::ncclBusGBps, 1e-3, 1e5},
    {"nccl_base_us", &DeviceProfile::ncclBaseUs, 0, 1e6},
    {"nccl_step_us", &DeviceProfile::ncclStepUs, 0, 1e6},
    {"launch_us", &DeviceProfile::launchUs, 0, 1e6},
    {"record_us", &DeviceProfile::recordUs, 0, 1e6},
    {"wait_us", &DeviceProfile::waitUs, 0, 1e6},
    {"graph_launch_us", &DeviceProfile::graphLaunchUs, 0, 1e6},
    {"graph_node_us", &DeviceProfile::graphNodeUs, 0, 1e6},
    {"upload_node_us", &DeviceProfile::uploadNodeUs, 0, 1e6},
    {"instantiate_node_us", &DeviceProfile::instantiateNodeUs, 0, 1e6},
    {"node_update_us", &DeviceProfile::nodeUpdateUs, 0, 1e6},
    {"sync_latency_us", &DeviceProfile::syncLatencyUs, 0, 1e6},
    {"stream_gap_us", &DeviceProfile::streamGapUs, 0, 1e6},
    {"graph_gap_us", &DeviceProfile::graphGapUs, 0, 1e6},
    {"wait_latency_us", &DeviceProfile::waitLatencyUs, 0, 1e6},
    {"host_func_latency_us", &DeviceProfile::hostFuncLatencyUs, 0, 1e6},
    {"copy_latency_us", &DeviceProfile::copyLatencyUs, 0, 1e6},
    {"timer_resolution_ns", &DeviceProfile::timerResolutionNs, 0, 1e6},
};
const CountKey kCountKeys[] = {
    // Ranges a real device can have (with room for the next generations):
    // a profile outside them is a typo, and would make the model's cost
    // unbounded.
    {"sms", &DeviceProfile::sms, 1, 1024},
    {"nccl_channels", &DeviceProfile::ncclChannels, 1, 64},
    {"max_threads_per_sm", &DeviceProfile::maxThreadsPerSM, 32, 8192},
    {"max_blocks_per_sm", &DeviceProfile::maxBlocksPerSM, 1, 256},
    {"max_resident_kernels", &DeviceProfile::maxResidentKernels, 1, 4096},
    {"hardware_queues", &DeviceProfile::hardwareQueues, 1, 128},
    {"launch_queue_depth", &DeviceProfile::launchQueueDepth, 1, 1 << 20},
    {"copy_engines_h2d", &DeviceProfile::copyEnginesH2D, 1, 16},
    {"copy_engines_d2h", &DeviceProfile::copyEnginesD2H, 1, 16},
    {"shared_memory_per_sm", &DeviceProfile::sharedMemoryPerSM, 1024, 1 << 22},
    {"shared_memory_per_block", &DeviceProfile::sharedMemoryPerBlock, 0, 1 << 22},
    {"registers_per_sm", &DeviceProfile::registersPerSM, 256, 1 << 22},
};
} // namespace

std::optional<std::pair<double, double>> DeviceProfile::countRange(llvm::StringRef key) {
  for (const CountKey &k : kCountKeys)
    if (key == k.key)
      return std::make_pair(k.min, k.max);
  return std::nullopt;
}

void DeviceProfile::markMeasured(std::initializer_list<const char *> keys) {
  for (const char *key : keys)
    measured.push_back(key);
  std::sort(measured.begin(), measured.end());
  measured.erase(std::unique(measured.begin(), measured.end()), measured.end());
}

int DeviceProfile::priorityFor(program::PriorityClass cls) const {
  switch (cls) {
  case program::PriorityClass::High:
    return priorityGreatest;
  case program::PriorityClass::Low:
    return priorityLeast;
  default:
    // Integer division truncates towards zero, i.e. towards `least`.
    return priorityLeast + (priorityGreatest - priorityLeast) / 2;
  }
}

DeviceProfile::BlockUse DeviceProfile::blockUse(uint32_t threads, uint64_t smemBytes,
                                                uint32_t regs) const {
  BlockUse u;
  u.threads = threads;
  u.slots = 1;
  u.smem = (smemBytes + 127) / 128 * 128 + 1024;
  uint64_t warps = (uint64_t(threads) + 31) / 32;
  u.regs = regs ? (uint64_t(regs) * 32 + 255) / 256 * 256 * warps : 0;
  return u;
}

DeviceProfile::BlockUse DeviceProfile::smCapacity() const {
  return {maxThreadsPerSM, maxBlocksPerSM, sharedMemoryPerSM, registersPerSM};
}

unsigned DeviceProfile::blocksPerSM(uint32_t threads, uint64_t smemBytes,
                                    uint32_t regs) const {
  BlockUse use = blockUse(threads, smemBytes, regs), cap = smCapacity();
  uint64_t fit = cap.slots;
  auto limit = [&](uint64_t need, uint64_t have) {
    if (need)
      fit = std::min(fit, have / need);
  };
  limit(use.threads, cap.threads);
  limit(use.smem, cap.smem);
  limit(use.regs, cap.regs);
  return static_cast<unsigned>(fit);
}

uint64_t DeviceProfile::waves(const program::KernelWork &k) const {
  uint64_t perWave = uint64_t(blocksPerSM(k.threads, k.smemBytes, k.regs)) * sms;
  if (!perWave)
    return 1;
  return std::max<uint64_t>(1, (uint64_t(k.blocks) + perWave - 1) / perWave);
}

unsigned DeviceProfile::copyEngines(program::CopyDirection dir) const {
  return dir == program::CopyDirection::H2D   ? copyEnginesH2D
         : dir == program::CopyDirection::D2H ? copyEnginesD2H
                                              : 1;
}

double DeviceProfile::copyGBps(program::CopyDirection dir) const {
  switch (dir) {
  case program::CopyDirection::H2D:
    return h2dGBps;
  case program::CopyDirection::D2H:
    return d2hGBps;
  case program::CopyDirection::D2D:
    return d2dGBps;
  case program::CopyDirection::P2P:
    return p2pGBps;
  }
  return d2dGBps;
}

double DeviceProfile::collectiveTimeUs(program::CollectiveOp op, uint64_t bytes,
                                       uint32_t ranks) const {
  const double n = std::max<uint32_t>(1, ranks);
  if (n == 1) // NCCL copies the buffer (out of place) on the device
    return ncclBaseUs + copyTimeUs(program::CopyDirection::D2D, bytes);
  double share = 1, steps = n - 1;
  switch (op) {
  case program::CollectiveOp::AllReduce:
    share = 2 * (n - 1) / n, steps = 2 * (n - 1);
    break;
  case program::CollectiveOp::AllGather:
  case program::CollectiveOp::ReduceScatter:
    share = (n - 1) / n;
    break;
  case program::CollectiveOp::Broadcast:
    break;
  }
  return ncclBaseUs + steps * ncclStepUs + double(bytes) * share / (ncclBusGBps * 1e3);
}

uint64_t DeviceProfile::collectiveBytes(program::CollectiveOp op, double us,
                                        uint32_t ranks) const {
  // The formula is ncclBaseUs + fixed + bytes * slope: solved for bytes.
  const double fixed = collectiveTimeUs(op, 0, ranks);
  const double slope = collectiveTimeUs(op, 1u << 30, ranks) - fixed;
  const double bytes = (us - fixed) / slope * double(1u << 30);
  return bytes >= 1 && bytes < 1e15 ? static_cast<uint64_t>(bytes) : 1;
}

double DeviceProfile::copyTimeUs(program::CopyDirection dir, uint64_t bytes) const {
  // bytes / (GB/s * 1e9) seconds = bytes / (GB/s * 1e3) microseconds.
  return static_cast<double>(bytes) / (copyGBps(dir) * 1e3);
}

double DeviceProfile::pageableCopyTimeUs(program::CopyDirection dir, uint64_t bytes) const {
  return std::max(copyTimeUs(dir, bytes), static_cast<double>(bytes) / (pageableGBps * 1e3));
}

/// The deepest nesting of brackets outside strings (JSON's parser recurses
/// on it: 50 KB of '[' would overflow the stack).
static unsigned nesting(llvm::StringRef text) {
  unsigned depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return deepest;
}

/// The keys of the top-level object, in order (duplicates kept): JSON's
/// parser keeps the last of two, so a typo'd copy would silently win.
static std::vector<std::string> topLevelKeys(llvm::StringRef text) {
  std::vector<std::string> keys;
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t end = i + 1;
      while (end < text.size() && text[end] != '"')
        end += text[end] == '\\' ? 2 : 1;
      if (depth == 1) {
        size_t after = end + 1;
        while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after])))
          ++after;
        if (after < text.size() && text[after] == ':')
          keys.push_back(text.slice(i + 1, std::min(end, text.size())).str());
      }
      i = end;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return keys;
}

llvm::Expected<DeviceProfile> pipec::parseDeviceProfile(llvm::StringRef text) {
  // A UTF-8 byte order mark, as some editors write: not JSON, but no error.
  if (text.startswith("\xEF\xBB\xBF"))
    text = text.drop_front(3);
  if (nesting(text) > 8)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "a profile is one flat JSON object; this one "
                                   "nests %u levels deep",
                                   nesting(text));
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return parsed.takeError();
  const llvm::json::Object *obj = parsed->getAsObject();
  if (!obj)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "a profile must be a JSON object");
  DeviceProfile p;
  std::string problem;
  // Every key is one pipec knows: a typo is an error, with the key meant.
  std::vector<llvm::StringRef> known = {"name", "priority_least", "priority_greatest",
                                        "measured"};
  for (const NumberKey &k : kNumberKeys)
    known.push_back(k.key);
  for (const CountKey &k : kCountKeys)
    known.push_back(k.key);
  std::vector<std::string> keys;
  for (const auto &entry : *obj)
    keys.push_back(entry.first.str());
  std::sort(keys.begin(), keys.end());
  for (const std::string &key : keys) {
    if (std::find(known.begin(), known.end(), llvm::StringRef(key)) != known.end())
      continue;
    llvm::StringRef best;
    unsigned bestDistance = 3;
    for (llvm::StringRef k : known) {
      unsigned d = llvm::StringRef(key).lower() == k.lower()
                       ? 0
                       : llvm::StringRef(key).edit_distance(k, true, 3);
      if (d < bestDistance)
        bestDistance = d, best = k;
    }
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(), "unknown profile key '%s'%s", printable(key).c_str(),
        best.empty() ? "" : ("; did you mean '" + best.str() + "'?").c_str());
  }
  auto number = [&](llvm::StringRef key, double &into, double min, double max) {
    const llvm::json::Value *v = obj->get(key);
    if (!v || !problem.empty())
      return;
    llvm::Optional<double> d = v->getAsNumber();
    if (!d || !(*d >= min && *d <= max)) {
      problem = llvm::formatv("profile key '{0}' must be a number between "
                              "{1} and {2}",
                              key, llvm::format("%g", min), llvm::format("%g", max));
      return;
    }
    into = *d;
  };
  {
    std::vector<std::string> keys = topLevelKeys(text);
    std::sort(keys.begin(), keys.end());
    auto twice = std::adjacent_find(keys.begin(), keys.end());
    if (twice != keys.end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "profile key '%s' is given twice",
                                     printable(*twice).c_str());
  }
  if (const llvm::json::Value *v = obj->get("name")) {
    llvm::Optional<llvm::StringRef> name = v->getAsString();
    if (!name)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "profile key 'name' must be a string");
    // It is printed on every run: no control characters reach a terminal.
    p.name = printable(name->take_front(256));
  }
  double least = p.priorityLeast, greatest = p.priorityGreatest;
  number("priority_least", least, -1000, 1000);
  number("priority_greatest", greatest, -1000, 1000);
  for (const NumberKey &k : kNumberKeys)
    number(k.key, p.*k.field, k.min, k.max);
  for (const CountKey &k : kCountKeys) {
    double value = p.*k.field;
    number(k.key, value, k.min, k.max);
    if (problem.empty() && value != static_cast<unsigned>(value))
      problem = llvm::formatv("profile key '{0}' must be a whole number", k.key);
    p.*k.field = static_cast<unsigned>(value);
  }
  if (problem.empty() && greatest > least)
    problem = "profile key 'priority_greatest' must be at most "
              "'priority_least'";
  // What was measured: the file's list where it has one (pipec writes it),
  // else every key it gives (a user's figures).
  if (const llvm::json::Value *v = obj->get("measured"); v && problem.empty()) {
    const llvm::json::Array *list = v->getAsArray();
    if (!list)
      problem = "profile key 'measured' must be a list of profile keys";
    for (size_t i = 0; list && i < list->size() && problem.empty(); ++i) {
      llvm::Optional<llvm::StringRef> key = (*list)[i].getAsString();
      if (!key || *key == "measured" || *key == "name" ||
          std::find(known.begin(), known.end(), *key) == known.end())
        problem = llvm::formatv("profile key 'measured' lists '{0}', not a profile key",
                                key ? printable(*key) : std::string("a non-string"));
      else
        p.measured.push_back(key->str());
    }
  } else {
    for (const std::string &key : keys)
      if (key != "name")
        p.measured.push_back(key);
  }
  std::sort(p.measured.begin(), p.measured.end());
  p.measured.erase(std::unique(p.measured.begin(), p.measured.end()), p.measured.end());
  if (!problem.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), problem);
  p.priorityLeast = static_cast<int>(least);
  p.priorityGreatest = static_cast<int>(greatest);
  return p;
}

void pipec::writeDeviceProfile(const DeviceProfile &p, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("name", p.name);
    j.attribute("priority_least", p.priorityLeast);
    j.attribute("priority_greatest", p.priorityGreatest);
    // The shortest text that reads back as the same double: 2.6, not
    // 2.6000000000000001 (llvm::json's %.17g).
    for (const NumberKey &k : kNumberKeys) {
      const double value = p.*k.field;
      j.attributeBegin(k.key);
      j.rawValue([&](llvm::raw_ostream &out) {
        char text[64];
        std::to_chars_result r = std::to_chars(text, text + sizeof text, value);
        out.write(text, static_cast<size_t>(r.ptr - text));
      });
      j.attributeEnd();
    }
    for (const CountKey &k : kCountKeys)
      j.attribute(k.key, int64_t(p.*k.field));
    j.attributeArray("measured", [&] {
      for (const std::string &key : p.measured)
        j.value(key);
    });
  });
  os << '\n';
}
