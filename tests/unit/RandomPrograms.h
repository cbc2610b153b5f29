//===- RandomPrograms.h - Random .pipe programs for cross-checks ----------===//
#ifndef PIPEC_TESTS_RANDOMPROGRAMS_H
#define PIPEC_TESTS_RANDOMPROGRAMS_H

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace pipec::test {

/// ` depends_on(A, B@prev)` for a non-empty list, else nothing.
inline std::string dependsOnClause(const std::vector<std::string> &deps) {
  if (deps.empty())
    return "";
  std::string text = " depends_on(";
  for (size_t k = 0; k < deps.size(); ++k)
    text += (k ? ", " : "") + deps[k];
  return text + ")";
}

/// ` depends_on(...)` of stage Xi on earlier stages X0 .. X(i-1): each one
/// in `oneIn`, else (with several iterations) one in `prevOneIn` on the
/// previous iteration's; or nothing.
inline std::string randomBackwardDeps(std::mt19937 &rng, uint32_t i, uint32_t iterations,
                                      unsigned oneIn, unsigned prevOneIn) {
  std::vector<std::string> deps;
  for (uint32_t j = 0; j < i; ++j)
    if (rng() % oneIn == 0)
      deps.push_back("X" + std::to_string(j));
    else if (iterations > 1 && rng() % prevOneIn == 0)
      deps.push_back("X" + std::to_string(j) + "@prev");
  return dependsOnClause(deps);
}

/// A random program with every kind of stage and resource: kernels of many
/// shapes (waves, shared memory, registers), copies in every direction,
/// host stages, priorities, iterations, @prev. With `hostThread`, also `cpu`
/// stages (whose dependencies on device stages are host synchronisations)
/// and `issue=` dispatch on launches.
/// What goes inside `[...]` for a stage that runs only in some iterations.
inline const char *randomRunWords(std::mt19937 &rng) {
  static const char *const kinds[] = {"first",   "last",        "every=2",      "every=3",
                                      "every=4", "first, last", "every=2, last"};
  return kinds[rng() % 7];
}

/// With `conditional`, some stages run only in some iterations.
inline std::string randomWorkload(std::mt19937 &rng, bool hostThread = false,
                                  bool conditional = false) {
  uint32_t t = 1 + rng() % 10, streams = 1 + rng() % 5;
  uint32_t iterations = 1 + rng() % (conditional ? 7 : 3);
  std::string text = "pipeline r {\n  iterations " + std::to_string(iterations) + ";\n";
  const char *priorities[] = {"", " priority high", " priority low", " priority -2"};
  for (uint32_t s = 0; s < streams; ++s)
    text += "  stream s" + std::to_string(s) + priorities[rng() % 4] + ";\n";
  for (uint32_t i = 0; i < t; ++i) {
    text += "  stage X" + std::to_string(i);
    if (hostThread && rng() % 4 == 0) {
      text += " cpu " + std::to_string(rng() % 80) + "us";
      if (conditional && rng() % 3 == 0)
        text += std::string(" [") + randomRunWords(rng) + "]";
    } else {
      if (rng() % 4)
        text += " on s" + std::to_string(rng() % streams);
      switch (rng() % 6) {
      case 5:
        text += " memset " + std::to_string(1 + rng() % 4000) + "KB";
        break;
      case 0:
        text += " copy " +
                std::string(rng() % 2   ? "h2d"
                            : rng() % 2 ? "d2h"
                                        : "d2d") +
                " " + std::to_string(1 + rng() % 4000) + "KB";
        break;
      case 1:
        text += " host " + std::to_string(1 + rng() % 50) + "us";
        break;
      default: {
        static const unsigned threads[] = {32, 128, 256, 1024};
        text += " kernel " + std::to_string(1 + rng() % 300) +
                "us [blocks=" + std::to_string(1 + rng() % 3000) +
                ", threads=" + std::to_string(threads[rng() % 4]);
        if (rng() % 3 == 0)
          text += ", smem=" + std::to_string(rng() % 100) + "KiB";
        if (rng() % 3 == 0)
          text += ", regs=" + std::to_string(16 + rng() % 48);
        if (hostThread && rng() % 3 == 0)
          text += ", issue=" + std::to_string(rng() % 40) + "us";
        if (conditional && rng() % 3 == 0)
          text += std::string(", ") + randomRunWords(rng);
        text += "]";
        break;
      }
      }
      if (conditional && text.back() != ']' && rng() % 3 == 0)
        text += std::string(" [") + randomRunWords(rng) + "]";
    }
    text += randomBackwardDeps(rng, i, iterations, 3, 8) + ";\n";
  }
  return text + "}\n";
}

/// Random stages on random streams, random reads and writes of random
/// rings, some declared dependencies (backward and forward in declaration
/// order, some @prev(k)). With `host`, host buffers too, and cpu stages on
/// the host thread: a stage is a kernel (device buffers), a cpu stage (host
/// buffers) or a copy between the two.
/// `[first]`, `[last]`, `[every=K]` or a mix, for a stage that runs only in
/// some iterations.
inline std::string randomRunCondition(std::mt19937 &rng) {
  return std::string(" [") + randomRunWords(rng) + "]";
}

/// `conditional`: some stages run only in some iterations; every buffer
/// is then of one slot (rings are for stages that run in every iteration).
inline std::string randomData(std::mt19937 &rng, bool declared, bool host = false,
                              bool conditional = false) {
  uint32_t stages = 1 + rng() % 7, buffers = 1 + rng() % 3, streams = 1 + rng() % 3;
  uint32_t hostBuffers = host ? 1 + rng() % 2 : 0;
  uint32_t iterations = 1 + rng() % (conditional ? 8 : 5);
  std::string t = "pipeline r {\n  iterations " + std::to_string(iterations) + ";\n";
  if (declared)
    t += "  sync declared;\n";
  for (uint32_t s = 0; s < streams; ++s)
    t += "  stream s" + std::to_string(s) + ";\n";
  std::vector<uint32_t> slots;
  for (uint32_t b = 0; b < buffers; ++b) {
    slots.push_back(conditional ? 1 : 1 + rng() % 3);
    t += "  buffer b" + std::to_string(b) + "[" + std::to_string(slots.back()) + "] 1MB;\n";
  }
  for (uint32_t b = 0; b < hostBuffers; ++b)
    t += "  buffer h" + std::to_string(b) + "[" +
         std::to_string(conditional ? 1 : 1 + rng() % 3) + "] 1MB host;\n";
  auto some = [&](const char *prefix, uint32_t count) {
    std::set<std::string> out;
    for (uint32_t b = 0; b < count; ++b)
      if (rng() % 3 == 0)
        out.insert(prefix + std::to_string(b));
    return out;
  };
  auto one = [&](const char *prefix, uint32_t count) {
    return std::set<std::string>{prefix + std::to_string(rng() % count)};
  };
  for (uint32_t i = 0; i < stages; ++i) {
    t += "  stage X" + std::to_string(i);
    std::set<std::string> reads, writes;
    const std::string stream = " on s" + std::to_string(rng() % streams);
    std::string attrs; // (a copy of pageable memory, version 6)
    switch (host ? rng() % 4 : 0) {
    case 0:
      t += stream + " kernel " + std::to_string(1 + rng() % 9) + "us";
      reads = some("b", buffers);
      writes = some("b", buffers);
      // A ring read K iterations back (K below its slots).
      if (uint32_t b = rng() % buffers; slots[b] > 1 && rng() % 3 == 0)
        reads.insert("b" + std::to_string(b) + "@prev(" +
                     std::to_string(1 + rng() % (slots[b] - 1)) + ")");
      break;
    case 1:
      t += " cpu " + std::to_string(1 + rng() % 9) + "us";
      reads = some("h", hostBuffers);
      writes = some("h", hostBuffers);
      break;
    case 2:
      t += stream + " copy h2d";
      reads = one("h", hostBuffers);
      writes = one("b", buffers);
      if (rng() % 3 == 0)
        attrs = "pageable";
      break;
    default:
      t += stream + " copy d2h";
      reads = one("b", buffers);
      writes = one("h", hostBuffers);
      if (rng() % 3 == 0)
        attrs = "pageable";
      break;
    }
    auto list = [](const char *what, const std::set<std::string> &bs) {
      if (bs.empty())
        return std::string();
      std::string out = std::string(" ") + what + "(";
      bool first = true;
      for (const std::string &b : bs) {
        out += (first ? "" : ", ") + b;
        first = false;
      }
      return out + ")";
    };
    if (conditional && rng() % 2)
      attrs += std::string(attrs.empty() ? "" : ", ") + randomRunWords(rng);
    if (!attrs.empty())
      t += " [" + attrs + "]";
    t += list("reads", reads) + list("writes", writes);
    std::string deps;
    for (uint32_t j = 0; j < stages; ++j) {
      if (j < i && rng() % 4 == 0)
        deps += (deps.empty() ? "" : ", ") + ("X" + std::to_string(j));
      else if (iterations > 1 && rng() % 6 == 0)
        deps += (deps.empty() ? "" : ", ") +
                ("X" + std::to_string(j) + "@prev(" + std::to_string(1 + rng() % 2) + ")");
    }
    if (!deps.empty())
      t += " depends_on(" + deps + ")";
    t += ";\n";
  }
  return t + "}\n";
}

/// A random program: T stages on S streams (some unpinned), random
/// same-iteration edges that respect a random hidden order, some @prev;
/// with `conditional`, some stages run only in some iterations; with
/// `devices` above 1, the streams are on that many devices, at random.
inline std::string randomProgram(std::mt19937 &rng, bool allowAuto, bool conditional = false,
                                 uint32_t devices = 1) {
  uint32_t t = 1 + rng() % 9, streams = 1 + rng() % 4;
  uint32_t iterations = 1 + rng() % (conditional ? 7 : 3);
  std::vector<uint32_t> rank(t);
  for (uint32_t i = 0; i < t; ++i)
    rank[i] = i;
  std::shuffle(rank.begin(), rank.end(), rng);
  std::string text = "pipeline r {\n  iterations " + std::to_string(iterations) + ";\n";
  if (devices > 1) {
    streams = devices + rng() % 4; // a stream on each device at least
    for (uint32_t d = 0; d < devices; ++d)
      text += "  device gpu" + std::to_string(d) + ";\n";
  }
  std::vector<uint32_t> deviceOf(streams, 0);
  for (uint32_t s = 0; s < streams; ++s) {
    text += "  stream s" + std::to_string(s);
    if (devices > 1) {
      deviceOf[s] = s < devices ? s : rng() % devices;
      text += " on gpu" + std::to_string(deviceOf[s]);
    }
    text += ";\n";
  }
  for (uint32_t i = 0; i < t; ++i) {
    text += "  stage X" + std::to_string(i);
    int32_t stream = -1;
    if (!allowAuto || rng() % 3) {
      stream = static_cast<int32_t>(rng() % streams);
      text += " on s" + std::to_string(stream);
    }
    if (devices > 1 && stream >= 0 && rng() % 5 == 0) {
      // A collective: the streams of 1 to all devices, one each (the
      // chosen stream's device first).
      std::string list = "s" + std::to_string(stream);
      for (uint32_t d = 0; d < devices; ++d)
        if (d != deviceOf[stream] && rng() % 2)
          for (uint32_t s = 0; s < streams; ++s)
            if (deviceOf[s] == d) {
              list += ", s" + std::to_string(s);
              break;
            }
      text.erase(text.size() - (" on s" + std::to_string(stream)).size());
      text += " on (" + list + ") " + std::string(rng() % 2 ? "allreduce" : "allgather") +
              " " + std::to_string(1 + rng() % 8) + "MB";
    } else if (devices > 1 && stream >= 0 && rng() % 4 == 0) // a peer copy
      text += " copy p2p " + std::to_string(1 + rng() % 20) + "us to gpu" +
              std::to_string((deviceOf[stream] + 1 + rng() % (devices - 1)) % devices);
    else
      text += " kernel " + std::to_string(1 + rng() % 20) + "us";
    if (conditional && rng() % 3 == 0)
      text += randomRunCondition(rng);
    std::vector<std::string> deps;
    for (uint32_t j = 0; j < t; ++j) {
      if (rank[j] < rank[i] && rng() % 3 == 0)
        deps.push_back("X" + std::to_string(j));
      else if (iterations > 1 && rng() % 8 == 0)
        deps.push_back("X" + std::to_string(j) + "@prev");
    }
    text += dependsOnClause(deps) + ";\n";
  }
  return text + "}\n";
}

/// Random data on 2 or 3 devices (version 4): a stream or two and a buffer
/// or two (rings of 1 to 3 slots) per device; kernels touch their device's
/// buffers, peer copies read theirs and write another device's, and
/// collectives read and write a buffer of each device they span.
inline std::string randomDeviceData(std::mt19937 &rng, bool declared) {
  const uint32_t devices = 2 + rng() % 2, stages = 2 + rng() % 7;
  const uint32_t iterations = 1 + rng() % 4;
  std::string t =
      "version 4;\npipeline r {\n  iterations " + std::to_string(iterations) + ";\n";
  if (declared)
    t += "  sync declared;\n";
  std::vector<std::vector<std::string>> streams(devices), buffers(devices);
  for (uint32_t d = 0; d < devices; ++d) {
    const std::string dev = "g" + std::to_string(d);
    t += "  device " + dev + ";\n";
    for (uint32_t k = 0, n = 1 + rng() % 2; k < n; ++k) {
      streams[d].push_back("s" + std::to_string(d) + "_" + std::to_string(k));
      t += "  stream " + streams[d].back() + " on " + dev + ";\n";
    }
    for (uint32_t k = 0, n = 1 + rng() % 2; k < n; ++k) {
      buffers[d].push_back("b" + std::to_string(d) + "_" + std::to_string(k));
      t += "  buffer " + buffers[d].back() + "[" + std::to_string(1 + rng() % 3) +
           "] 1MB on " + dev + ";\n";
    }
  }
  auto pick = [&](const std::vector<std::string> &from) { return from[rng() % from.size()]; };
  auto list = [](const char *what, const std::vector<std::string> &bs) {
    if (bs.empty())
      return std::string();
    std::string out = std::string(" ") + what + "(";
    for (size_t i = 0; i < bs.size(); ++i)
      out += (i ? ", " : "") + bs[i];
    return out + ")";
  };
  for (uint32_t i = 0; i < stages; ++i) {
    const uint32_t d = rng() % devices;
    std::vector<std::string> reads, writes;
    t += "  stage X" + std::to_string(i);
    switch (rng() % 4) {
    case 0: { // a collective over this device and some others
      std::string on = pick(streams[d]);
      reads.push_back(pick(buffers[d]));
      writes.push_back(reads.back());
      for (uint32_t e = 0; e < devices; ++e)
        if (e != d && rng() % 3) {
          on += ", " + pick(streams[e]);
          if (rng() % 2)
            reads.push_back(pick(buffers[e]));
          writes.push_back(pick(buffers[e]));
        }
      t += " on (" + on + ") allreduce 1MB";
      break;
    }
    case 1: { // a peer copy to another device
      const uint32_t e = (d + 1 + rng() % (devices - 1)) % devices;
      t += " on " + pick(streams[d]) + " copy p2p 1MB";
      reads.push_back(pick(buffers[d]));
      writes.push_back(pick(buffers[e]));
      break;
    }
    default:
      t += " on " + pick(streams[d]) + " kernel " + std::to_string(1 + rng() % 9) + "us";
      if (rng() % 2)
        reads.push_back(pick(buffers[d]));
      if (rng() % 2)
        writes.push_back(pick(buffers[d]));
      break;
    }
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    std::sort(writes.begin(), writes.end());
    writes.erase(std::unique(writes.begin(), writes.end()), writes.end());
    t += list("reads", reads) + list("writes", writes);
    std::vector<std::string> deps;
    for (uint32_t j = 0; j < i; ++j)
      if (rng() % 5 == 0)
        deps.push_back("X" + std::to_string(j));
    t += dependsOnClause(deps) + ";\n";
  }
  return t + "}\n";
}

/// A random program on 2 to 4 devices (version 4), each with a stream or
/// two and its host thread: kernels and copies on the streams, cpu stages
/// `on` a device, random declared dependencies (some @prev), 1 to 3
/// iterations. The shape of a step of several ranks.
inline std::string randomHostThreads(std::mt19937 &rng) {
  const uint32_t devices = 2 + rng() % 3, stages = 2 + rng() % 10;
  const uint32_t iterations = 1 + rng() % 3;
  std::string t =
      "version 4;\npipeline r {\n  iterations " + std::to_string(iterations) + ";\n";
  std::vector<uint32_t> streamsOf(devices);
  for (uint32_t d = 0; d < devices; ++d) {
    t += "  device gpu" + std::to_string(d) + ";\n";
    streamsOf[d] = 1 + rng() % 2;
    for (uint32_t k = 0; k < streamsOf[d]; ++k)
      t += "  stream s" + std::to_string(d) + "_" + std::to_string(k) + " on gpu" +
           std::to_string(d) + ";\n";
  }
  for (uint32_t i = 0; i < stages; ++i) {
    const uint32_t d = rng() % devices;
    t += "  stage X" + std::to_string(i);
    if (rng() % 3 == 0) {
      t += " on gpu" + std::to_string(d) + " cpu " + std::to_string(rng() % 40) + "us";
    } else {
      t += " on s" + std::to_string(d) + "_" + std::to_string(rng() % streamsOf[d]);
      t += rng() % 4 ? " kernel " + std::to_string(1 + rng() % 30) + "us"
                     : std::string(" copy h2d ") + std::to_string(1 + rng() % 2000) + "KB";
    }
    std::vector<std::string> deps;
    for (uint32_t j = 0; j < stages; ++j) {
      if (j < i && rng() % 4 == 0)
        deps.push_back("X" + std::to_string(j));
      else if (iterations > 1 && rng() % 8 == 0)
        deps.push_back("X" + std::to_string(j) + "@prev");
    }
    t += dependsOnClause(deps) + ";\n";
  }
  return t + "}\n";
}

/// Recorded graph launches (`graph=N`, version 5): runs of consecutive
/// stages that are nodes of one graph (kernels, copies, memsets, host
/// functions on random streams; the first may take issue=) among plain
/// launches and cpu stages, random backward dependencies (some @prev), 1 to
/// 3 iterations. The shape of an imported step.
inline std::string randomRecordedGraphs(std::mt19937 &rng) {
  const uint32_t streams = 1 + rng() % 4, stages = 2 + rng() % 14;
  const uint32_t iterations = 1 + rng() % 3;
  std::string t =
      "version 5;\npipeline r {\n  iterations " + std::to_string(iterations) + ";\n";
  for (uint32_t k = 0; k < streams; ++k)
    t += "  stream s" + std::to_string(k) + ";\n";
  uint32_t graph = 0, left = 0;
  bool opened = false; // the graph's first node is written
  for (uint32_t i = 0; i < stages; ++i) {
    t += "  stage X" + std::to_string(i);
    if (left == 0 && rng() % 3 == 0)
      left = 1 + rng() % 5, ++graph, opened = false;
    if (left == 0 && rng() % 4 == 0) {
      t += " cpu " + std::to_string(rng() % 40) + "us";
    } else {
      t += " on s" + std::to_string(rng() % streams);
      std::string attrs;
      switch (rng() % 5) {
      case 0:
        t += " copy " + std::string(rng() % 2 ? "h2d " : "d2d ") +
             std::to_string(1 + rng() % 2000) + "KB";
        break;
      case 1:
        t += " memset " + std::to_string(1 + rng() % 2000) + "KB";
        break;
      case 2:
        t += " host " + std::to_string(1 + rng() % 20) + "us";
        break;
      default:
        t += " kernel " + std::to_string(1 + rng() % 60) + "us";
        attrs = "blocks=" + std::to_string(1 + rng() % 500);
      }
      const bool first = left > 0 && !opened;
      if ((left == 0 || first) && rng() % 3 == 0)
        attrs += std::string(attrs.empty() ? "" : ", ") +
                 "issue=" + std::to_string(rng() % 20) + "us";
      if (left > 0) {
        attrs += std::string(attrs.empty() ? "" : ", ") + "graph=" + std::to_string(graph);
        --left;
        opened = true;
      }
      if (!attrs.empty())
        t += " [" + attrs + "]";
    }
    t += randomBackwardDeps(rng, i, iterations, 4, 10) + ";\n";
  }
  return t + "}\n";
}

} // namespace pipec::test

#endif // PIPEC_TESTS_RANDOMPROGRAMS_H
