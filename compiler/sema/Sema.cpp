//===- Sema.cpp -----------------------------------------------------------===//

#include "compiler/sema/Sema.h"

#include "compiler/sema/Checker.h"

#include "compiler/program/Communication.h"

using namespace pipec;
using namespace pipec::program;
using namespace pipec::sema;
using llvm::formatv;

Program Sema::run(const ast::File &file, bool quietIfEmpty, ast::File *release) {
  Program program;
  program.source = file.path;
  if (file.version) {
    const uint64_t v = file.version->value;
    if (v < kOldestVersion || v > kNewestVersion)
      diags.error(file.version->range,
                  formatv("pipec reads language versions {0} to {1}, not {2}", kOldestVersion,
                          kNewestVersion, v));
    else
      version = static_cast<unsigned>(v);
    versionWords = "'version " + std::to_string(version) + ";'";
  }
  if (file.pipelines.empty() && !quietIfEmpty) {
    diags.error({file.start, file.start},
                "no pipeline in this file; declare one with 'pipeline NAME { "
                "... }'");
    return program;
  }
  llvm::StringMap<const ast::Pipeline *> names;
  for (size_t i = 0; i < file.pipelines.size(); ++i) {
    const ast::Pipeline &p = file.pipelines[i];
    if (tooLong(p.name))
      continue;
    if (!p.name.text.empty()) {
      auto [it, inserted] = names.try_emplace(p.name.text, &p);
      if (!inserted)
        diags.error(p.name.range(), formatv("redefinition of pipeline '{0}'", p.name.text))
            .attachNote(it->second->name.range(), kPrevious);
    }
    if (p.hasSyntaxErrors)
      continue;
    if (std::optional<Pipeline> checked =
            checkPipeline(p, release ? &release->pipelines[i] : nullptr))
      program.pipelines.push_back(std::move(*checked));
  }
  return program;
}

void Sema::needsVersion(unsigned needed, llvm::SMRange range, llvm::StringRef what) {
  // Once a file for each: the first use says it.
  if (version < needed && versionErrors.insert(what).second)
    diags.error(range, formatv("{0} came with language version {1}; this file says {2}", what,
                               needed, versionWords));
}

void Sema::flush(DiagnosticEngine &out) {
  std::stable_sort(buffer.begin(), buffer.end(), [](const Diagnostic &a, const Diagnostic &b) {
    return std::less<const char *>()(a.range.Start.getPointer(), b.range.Start.getPointer());
  });
  for (Diagnostic &d : buffer) {
    if (out.shouldStop())
      break;
    out.report(std::move(d));
  }
  buffer.clear();
}

namespace {
/// A declaration's name (a list of names is its own).
const ast::Name &nameOf(const ast::Name &n) { return n; }
template <typename Decl> const ast::Name &nameOf(const Decl &d) { return d.name; }
/// The program's stages a declaration becomes: a collective's part per
/// stream it lists (version 4), one for any other.
size_t partsOf(const ast::StageDecl &s) {
  if (s.kind == StageKind::Collective && s.stream)
    return 1 + s.moreStreams.size();
  // A pageable copy: the copy, and its call's wait (program::pageableWait).
  if (s.kind == StageKind::Copy)
    for (const ast::Attr &a : s.attrs)
      if (a.name.text == "pageable")
        return 2;
  return 1;
}
/// The work a declaration names, before its amount and attributes.
StageWork workFor(const ast::StageDecl &s) {
  StageWork work = program::workOf(s.kind);
  if (auto *copy = std::get_if<CopyWork>(&work))
    copy->direction = s.direction;
  if (auto *collective = std::get_if<CollectiveWork>(&work))
    collective->op = s.collective;
  return work;
}
} // namespace

template <typename Decl>
void Sema::reportUnknown(const ast::Name &name, const char *what,
                         const std::vector<Decl> &decls) {
  // One index per list of declarations, built on first use.
  auto it = indexes.find(&decls);
  if (it == indexes.end()) {
    std::vector<llvm::StringRef> candidates;
    for (const Decl &d : decls)
      candidates.push_back(nameOf(d).text);
    it = indexes.emplace(&decls, sema::NameIndex(std::move(candidates))).first;
  }
  std::optional<size_t> near = it->second.suggest(name.text, suggestBudget);
  if (!near) {
    diags.error(name.range(), formatv("unknown {0} '{1}'", what, name.text));
    return;
  }
  const ast::Name &d = nameOf(decls[*near]);
  diags
      .error(name.range(),
             formatv("unknown {0} '{1}'; did you mean '{2}'?", what, name.text, d.text))
      .attachNote(d.range(), formatv("'{0}' declared here", d.text));
}

uint32_t Sema::checkIterations(const ast::Pipeline &p, llvm::SMRange &where) {
  uint32_t iterations = 1;
  const ast::Setting *first = nullptr;
  for (const ast::Setting &s : p.settings) {
    if (s.kind != ast::Setting::Iterations)
      continue;
    if (first) {
      diags.error(s.range, "redefinition of 'iterations'").attachNote(first->range, kPrevious);
      continue;
    }
    first = &s;
    where = s.iterations.range;
    std::optional<uint64_t> count = constants->countOf(s.iterations, "iterations");
    if (!count)
      continue;
    if (*count < 1 || *count > kMaxIterations)
      diags.error(s.iterations.range,
                  formatv("iterations must be between 1 and {0}", kMaxIterations));
    else
      iterations = static_cast<uint32_t>(*count);
  }
  return iterations;
}

/// `sync inferred;` (the default) or `sync declared;`.
bool Sema::checkSync(const ast::Pipeline &p) {
  const ast::Setting *first = nullptr;
  for (const ast::Setting &s : p.settings) {
    if (s.kind != ast::Setting::Sync)
      continue;
    if (first) {
      diags.error(s.range, "redefinition of 'sync'").attachNote(first->range, kPrevious);
      continue;
    }
    first = &s;
    needsVersion(2, s.range, "'sync'");
  }
  return first && first->syncDeclared;
}

/// `buffer NAME[SLOTS] SIZE [host | on DEVICE];`
void Sema::checkBuffers(const ast::Pipeline &p, Pipeline &out,
                        const llvm::StringMap<uint32_t> &devices,
                        llvm::StringMap<uint32_t> &index) {
  for (const ast::BufferDecl &b : p.buffers) {
    needsVersion(2, b.name.range(), "buffers");
    if (b.state)
      needsVersion(3, b.name.range(), "state buffers");
    if (tooLong(b.name))
      continue;
    auto [it, inserted] =
        index.try_emplace(b.name.text, static_cast<uint32_t>(out.buffers.size()));
    if (!inserted) {
      diags.error(b.name.range(), formatv("redefinition of buffer '{0}'", b.name.text))
          .attachNote(out.buffers[it->second].range, kPrevious);
      continue;
    }
    Buffer buffer;
    buffer.name = b.name.text;
    buffer.range = b.name.range();
    buffer.host = b.host;
    if (b.device) {
      // Device memory of the device it names; the first one's otherwise.
      needsVersion(4, b.device->range(), "'on DEVICE' for a buffer");
      auto device = devices.find(b.device->text);
      if (device == devices.end()) {
        reportUnknown(*b.device, "device", p.devices);
        buffer.device = kUnknownDevice; // no second error for its accesses
      } else {
        buffer.device = device->second;
      }
    }
    buffer.state = buffer.stateDeclared = b.state;
    std::optional<uint64_t> slots;
    if (b.slots)
      slots = constants->countOf(*b.slots, "a ring's slots");
    if (b.state && slots && *slots != 1)
      diags.error(b.slots->range,
                  formatv("buffer '{0}' is state: it holds one value carried from "
                          "iteration to iteration, in one slot",
                          b.name.text));
    if (slots) {
      if (*slots < 1 || *slots > kMaxSlots)
        diags.error(b.slots->range, formatv("a ring's slots must be between 1 "
                                            "and {0}",
                                            kMaxSlots));
      else
        buffer.slots = static_cast<uint32_t>(*slots);
    }
    sema::Quantity q = constants->quantityOf(b.size);
    if (q.kind == sema::Quantity::Invalid) {
      // reported
    } else if (q.kind != sema::Quantity::Size || q.fractionalBytes || q.bytes == 0) {
      diags.error(b.size.range(), formatv("'buffer' expects a size ({0}) of at least 1B",
                                          sema::sizeUnitList()));
    } else if (q.tooLarge) {
      diags.error(b.size.range(), "size must be at most 1024GiB");
    } else {
      buffer.bytes = q.bytes;
    }
    out.buffers.push_back(std::move(buffer));
  }
}

/// Where a stage of `into`'s kind may reach, and the words for a mismatch.
static const char *wrongPlace(const Stage &into, const Buffer &b, bool write) {
  switch (into.kind()) {
  case StageKind::Kernel:
    return b.host ? "kernels read and write device memory" : nullptr;
  case StageKind::Host:
    return b.host ? nullptr : "host stages read and write pinned host memory";
  case StageKind::Cpu:
    return b.host ? nullptr : "cpu stages read and write pinned host memory";
  case StageKind::Collective:
    return b.host ? "a collective reads and writes device memory" : nullptr;
  case StageKind::Memset:
    if (!write)
      return "a memset writes device memory and reads none";
    return b.host ? "a memset writes device memory" : nullptr;
  case StageKind::Copy:
    switch (into.copy().direction) {
    case CopyDirection::H2D:
      if (write)
        return b.host ? "a 'copy h2d' writes device memory" : nullptr;
      return b.host ? nullptr : "a 'copy h2d' reads pinned host memory";
    case CopyDirection::D2H:
      if (write)
        return b.host ? nullptr : "a 'copy d2h' writes pinned host memory";
      return b.host ? "a 'copy d2h' reads device memory" : nullptr;
    case CopyDirection::D2D:
      return b.host ? "a 'copy d2d' reads and writes device memory" : nullptr;
    case CopyDirection::P2P:
      return b.host ? "a 'copy p2p' reads and writes device memory" : nullptr;
    }
  }
  return nullptr;
}

/// `reads(...)` and `writes(...)`: known buffers in the right memory, and a
/// copy's size against them (or taken from the buffer it writes).
void Sema::checkAccesses(const ast::StageDecl &s, Pipeline &out,
                         const llvm::StringMap<uint32_t> &buffers, const ast::Pipeline &p,
                         std::vector<bool> &bufferUsed, Stage &into) {
  for (bool write : {false, true})
    for (const ast::Access &a : s.accesses) {
      if (a.write != write)
        continue;
      for (size_t item = 0; item < a.buffers.size(); ++item) {
        const ast::Name &name = a.buffers[item];
        auto it = buffers.find(name.text);
        if (it == buffers.end()) {
          reportUnknown(name, "buffer", p.buffers);
          continue;
        }
        const Buffer &b = out.buffers[it->second];
        bufferUsed[it->second] = true;
        // `x@prev(K)`: the slot iteration i - K wrote.
        uint32_t distance = 0;
        if (const ast::Qualifier *q = a.qualifierOf(item)) {
          if (q->text != "@prev") {
            diags.error(q->range(),
                        formatv("unknown qualifier '{0}'; the only one is '@prev'", q->text));
            continue;
          }
          if (write) {
            diags.error(q->range(), formatv("a stage writes this iteration's slot of '{0}'; "
                                            "'@prev' is for reading an earlier one",
                                            name.text));
            continue;
          }
          const uint64_t k = q->distance ? q->distance->value : 1;
          if (k < 1 || k > kMaxIterations) {
            diags.error(q->distance ? q->distance->range : q->range(),
                        formatv("'@prev(k)' must have k between 1 and {0}", kMaxIterations));
            continue;
          }
          if (k >= b.slots) {
            diags
                .error(q->range(),
                       formatv("reading '{0}@prev({1})' needs a ring of more than {1} "
                               "slot{2}: '{0}' has {3}, and iteration i's write would "
                               "take the slot of iteration i - {1}",
                               name.text, k, k == 1 ? "" : "s", b.slots))
                .attachNote(b.range,
                            formatv("declare it 'buffer {0}[{1}] ...'", b.name, k + 1));
            continue;
          }
          distance = static_cast<uint32_t>(k);
          if (distance >= out.iterations)
            diags.warning(q->range(),
                          formatv("'{0}@prev({1})' reads only what '{0}' held before the "
                                  "pipeline, in a pipeline with {2} iteration{3}",
                                  name.text, distance, out.iterations,
                                  out.iterations == 1 ? "" : "s"));
        }
        bufferUsed[it->second] = true;
        if (const char *why = wrongPlace(into, b, write)) {
          diags
              .error(name.range(),
                     formatv("{0} stage '{1}' cannot access {2} buffer '{3}': {4}",
                             spelling(into.kind()), into.name, b.host ? "host" : "device",
                             b.name, why))
              .attachNote(b.range, formatv("'{0}' is declared here, in {1} "
                                           "memory",
                                           b.name, b.host ? "pinned host" : "device"));
          continue;
        }
        // A `copy p2p` writes its peer's memory: the device `to` names, or
        // the one of the first buffer it writes.
        bool toPeer = write && isPeerCopy(into);
        if (toPeer && into.copy().peerDevice == kNoPeer && !b.host)
          into.copy().peerDevice = b.device;
        if (toPeer && !b.host && b.device != kUnknownDevice &&
            into.copy().peerDevice != kUnknownDevice && into.copy().peerDevice != b.device) {
          const std::string &peer = out.devices[into.copy().peerDevice].name;
          const std::string &theirs = out.devices[b.device].name;
          diags
              .error(name.range(),
                     formatv("copy stage '{0}' cannot access buffer '{1}' on device "
                             "'{2}': a 'copy p2p' writes the memory of its peer device "
                             "'{3}'",
                             into.name, b.name, theirs, peer))
              .attachNote(b.range,
                          formatv("'{0}' is declared here, on device '{1}'", b.name, theirs));
          continue;
        }
        // A stage touches device memory of its stream's device only (a
        // collective over several, of the devices it spans: checkCollective).
        const bool spans = into.kind() == StageKind::Collective && !s.moreStreams.empty();
        if (!toPeer && !spans && !b.host && into.stream != kNoStream &&
            out.devices.size() > 1 && b.device != kUnknownDevice &&
            out.streams[into.stream].device != b.device) {
          const std::string &mine = out.devices[out.streams[into.stream].device].name;
          const std::string &theirs = out.devices[b.device].name;
          diags
              .error(name.range(),
                     formatv("{0} stage '{1}' on device '{2}' cannot access buffer '{3}' "
                             "on device '{4}': a stage touches the memory of its stream's "
                             "device",
                             spelling(into.kind()), into.name, mine, b.name, theirs))
              .attachNote(b.range,
                          formatv("'{0}' is declared here, on device '{1}'", b.name, theirs));
          continue;
        }
        const Access *first = nullptr;
        for (const Access &seen : into.accesses)
          if (seen.buffer == it->second && seen.write == write && seen.distance == distance &&
              !first)
            first = &seen;
        if (!first) {
          into.accesses.push_back({it->second, write, name.range(), distance});
          continue;
        }
        diags
            .warning(name.range(),
                     formatv("duplicate {0} of '{1}'", write ? "write" : "read", name.text))
            .attachNote(first->range, "first listed here");
      }
    }
  // A memset given a size fills that many bytes of what it writes: no more
  // than the buffer holds (cudaMemsetAsync past its end writes other memory).
  if (into.kind() == StageKind::Memset) {
    if (into.bytes)
      checkFitsBuffers(s, into, out, "memset '{0}' writes {1} bytes");
    return;
  }
  if (into.kind() != StageKind::Copy)
    return;
  if (s.amount.empty()) {
    // No quantity: the size of the buffer it writes.
    const Access *written = nullptr;
    for (const Access &a : into.accesses)
      if (a.write && !written)
        written = &a;
    bool rejected = std::any_of(s.accesses.begin(), s.accesses.end(),
                                [](const ast::Access &a) { return a.write; });
    if (!written && !rejected) {
      diags.error(s.kindRange, formatv("'copy' expects a size ({0}) or a time ({1}), or a "
                                       "buffer it writes to take the size from",
                                       sema::sizeUnitList(), sema::timeUnitList()));
      return;
    }
    if (!written)
      return; // its writes were reported
    into.bytes = out.buffers[written->buffer].bytes;
    into.durationUs = profile.copyTimeUs(into.copy().direction, *into.bytes);
    return;
  }
  // The bytes it moves, where it states them: a copy given as a time (a
  // measured one, an import's) moves what it moved, which the profile's
  // bandwidth only guesses at.
  if (into.bytes)
    checkFitsBuffers(s, into, out, "copy '{0}' moves {1} bytes");
}

void Sema::checkFitsBuffers(const ast::StageDecl &s, const Stage &into, const Pipeline &out,
                            const char *what) {
  const double moved = double(*into.bytes);
  for (const Access &a : into.accesses) {
    const Buffer &b = out.buffers[a.buffer];
    if (b.bytes && moved > double(b.bytes) + 0.5)
      diags
          .error(s.amount.range(),
                 formatv(what, into.name, static_cast<uint64_t>(moved)).str() +
                     formatv(", larger than buffer '{0}' ({1} bytes{2})", b.name, b.bytes,
                             b.slots > 1 ? " per slot" : "")
                         .str())
          .attachNote(b.range, formatv("'{0}' is declared here", b.name));
  }
}

/// `device NAME;`: the GPUs the pipeline runs on (version 4).
void Sema::checkDevices(const ast::Pipeline &p, Pipeline &out,
                        llvm::StringMap<uint32_t> &index) {
  for (const ast::DeviceDecl &d : p.devices) {
    needsVersion(4, d.name.range(), "devices");
    if (out.devices.size() == kMaxDevices) {
      diags.error(d.name.range(), formatv("too many devices: a pipeline may declare at "
                                          "most {0}",
                                          kMaxDevices));
      break;
    }
    if (tooLong(d.name))
      continue;
    auto [it, inserted] =
        index.try_emplace(d.name.text, static_cast<uint32_t>(out.devices.size()));
    if (!inserted) {
      diags.error(d.name.range(), formatv("redefinition of device '{0}'", d.name.text))
          .attachNote(out.devices[it->second].range, kPrevious);
      continue;
    }
    out.devices.push_back({d.name.text.str(), d.name.range()});
  }
}

void Sema::checkStreams(const ast::Pipeline &p, Pipeline &out,
                        const llvm::StringMap<uint32_t> &devices,
                        llvm::StringMap<uint32_t> &index) {
  for (const ast::StreamDecl &s : p.streams) {
    if (out.streams.size() == kMaxStreams) {
      diags.error(s.name.range(),
                  formatv("too many streams: a pipeline may declare at most {0} "
                          "(CUDA has at most 32 hardware queues)",
                          kMaxStreams));
      break;
    }
    if (tooLong(s.name))
      continue;
    auto [it, inserted] =
        index.try_emplace(s.name.text, static_cast<uint32_t>(out.streams.size()));
    if (!inserted) {
      diags.error(s.name.range(), formatv("redefinition of stream '{0}'", s.name.text))
          .attachNote(out.streams[it->second].range, kPrevious);
      continue;
    }
    Stream stream;
    stream.name = s.name.text;
    stream.range = s.name.range();
    if (s.device) {
      // On the device it names; the first one when it names none.
      needsVersion(4, s.device->range(), "'on DEVICE' for a stream");
      auto device = devices.find(s.device->text);
      if (device == devices.end())
        reportUnknown(*s.device, "device", p.devices);
      else
        stream.device = device->second;
    }
    switch (s.priority.kind) {
    case ast::PriorityKind::High:
      stream.priorityClass = PriorityClass::High;
      break;
    case ast::PriorityKind::Low:
      stream.priorityClass = PriorityClass::Low;
      break;
    case ast::PriorityKind::Default:
    case ast::PriorityKind::Normal:
      stream.priorityClass = PriorityClass::Normal;
      break;
    case ast::PriorityKind::Raw:
      stream.priorityClass = PriorityClass::Raw;
      stream.rawPriority = s.priority.raw;
      break;
    }
    if (stream.priorityClass == PriorityClass::Raw) {
      int64_t clamped = std::clamp<int64_t>(stream.rawPriority, profile.priorityGreatest,
                                            profile.priorityLeast);
      if (clamped != stream.rawPriority)
        diags.warning(s.priority.range,
                      formatv("priority {0} is outside the device's range {1} "
                              "(most urgent) to {2} (least); clamped to {3}",
                              stream.rawPriority, profile.priorityGreatest,
                              profile.priorityLeast, clamped));
      stream.cudaPriority = static_cast<int>(clamped);
    } else {
      stream.cudaPriority = profile.priorityFor(stream.priorityClass);
    }
    out.streams.push_back(std::move(stream));
  }
}

void Sema::checkWork(const ast::StageDecl &s, Stage &into) {
  // Copies and memsets take a size (bytes moved or filled) or a time; a
  // collective, the size it reduces or gathers, or a time (measured).
  const bool collective = into.kind() == StageKind::Collective;
  bool isCopy = into.kind() == StageKind::Copy || into.kind() == StageKind::Memset;
  // What the amount should have been; spelt out only for a diagnostic.
  auto expects = [&]() -> std::string {
    if (collective)
      return formatv("'{0}' expects a size ({1}) or a time ({2})",
                     spelling(into.collective().op), sema::sizeUnitList(),
                     sema::timeUnitList());
    if (isCopy)
      return formatv("'{0}' expects a size ({1}) or a time ({2})", spelling(into.kind()),
                     sema::sizeUnitList(), sema::timeUnitList());
    return formatv("'{0}' expects a time ({1})", spelling(into.kind()), sema::timeUnitList());
  };
  const ast::Amount &a = s.amount;
  sema::Quantity q = constants->quantityOf(a);
  switch (q.kind) {
  case sema::Quantity::Invalid:
    return;
  case sema::Quantity::UnknownUnit:
    diags.error(a.range(), formatv("unknown unit '{0}'; {1}", a.unit, expects()));
    return;
  case sema::Quantity::Bare:
    if (a.expr)
      diags.error(a.range(), formatv("{0}, not a plain number; give it a unit, as in "
                                     "'2*L us', or use a constant that has one",
                                     expects()));
    else
      diags.error(a.range(), formatv("{0}, not a bare number; write the unit "
                                     "right after it, as in '{1}us'",
                                     expects(), a.number));
    return;
  case sema::Quantity::Size:
    if (!isCopy && !collective) {
      diags.error(a.range(), formatv("{0}, not a size", expects()));
      return;
    }
    if (q.tooLarge) {
      diags.error(a.range(), "size must be at most 1024GiB");
      return;
    }
    if (q.fractionalBytes) {
      diags.error(a.range(), "size must be a whole number of bytes");
      return;
    }
    into.bytes = q.bytes;
    if (collective)
      return; // its time follows from the devices it spans (checkCollective)
    // A memset writes its bytes at device-to-device bandwidth.
    into.durationUs = profile.copyTimeUs(
        into.kind() == StageKind::Memset ? CopyDirection::D2D : into.copy().direction,
        q.bytes);
    return;
  case sema::Quantity::Time:
    // A collective given a time (as an import measures it) takes that
    // time, whatever the devices it spans and the links.
    if (q.tooLarge) {
      diags.error(a.range(), "time must be at most 3600s");
      return;
    }
    into.durationUs = q.micros;
    return;
  }
}

/// A collective's parts (version 4): one per stream it lists, each on its
/// own device, named for it; its time from the devices it spans.
void Sema::checkCollective(const ast::StageDecl &s, uint32_t first, Pipeline &out,
                           const llvm::StringMap<uint32_t> &streams, const ast::Pipeline &p,
                           std::vector<bool> &streamUsed) {
  Stage &head = out.stages[first];
  const uint32_t parts = s.stream ? 1 + static_cast<uint32_t>(s.moreStreams.size()) : 1;
  head.collective().group = first;
  head.collective().parts = parts;
  std::vector<int32_t> streamOf(parts, kNoStream);
  streamOf[0] = head.stream;
  bool known = head.stream != kNoStream;
  for (uint32_t k = 1; k < parts; ++k) {
    const ast::Name &name = s.moreStreams[k - 1];
    auto it = streams.find(name.text);
    if (it == streams.end()) {
      reportUnknown(name, "stream", p.streams);
      known = false;
      continue;
    }
    streamOf[k] = static_cast<int32_t>(it->second);
    streamUsed[it->second] = true;
  }
  // NCCL runs one rank per device: two parts on one device would wait for
  // each other on it.
  if (known) {
    std::vector<uint32_t> partOn(out.deviceCount(), UINT32_MAX);
    for (uint32_t k = 0; k < parts; ++k) {
      uint32_t device = out.streams[streamOf[k]].device;
      if (partOn[device] == UINT32_MAX) {
        partOn[device] = k;
        continue;
      }
      const ast::Name &name = k == 0 ? *s.stream : s.moreStreams[k - 1];
      const ast::Name &before =
          partOn[device] == 0 ? *s.stream : s.moreStreams[partOn[device] - 1];
      diags
          .error(name.range(),
                 formatv("collective '{0}' lists streams '{1}' and '{2}', both on device "
                         "'{3}': one stream per device",
                         head.name, before.text, name.text,
                         out.devices.empty() ? std::string("(the only one)")
                                             : out.devices[device].name))
          .attachNote(before.range(), formatv("'{0}' is listed here", before.text));
      known = false;
    }
  }
  if (head.bytes)
    head.durationUs = profile.collectiveTimeUs(head.collective().op, *head.bytes, parts);
  // Its reads and writes: each part's are the buffers on its device; a
  // buffer on a device it does not span is an error.
  std::vector<Access> accesses = std::move(head.accesses);
  head.accesses.clear();
  std::vector<std::vector<Access>> partAccesses(parts);
  if (parts == 1) {
    partAccesses[0] = std::move(accesses);
  } else if (known) {
    for (const Access &a : accesses) {
      const Buffer &b = out.buffers[a.buffer];
      if (b.device == kUnknownDevice)
        continue; // reported with the buffer
      uint32_t k = 0;
      while (k < parts && out.streams[streamOf[k]].device != b.device)
        ++k;
      if (k < parts) {
        partAccesses[k].push_back(a);
        continue;
      }
      std::string spanned;
      for (uint32_t j = 0; j < parts; ++j)
        spanned += (j ? ", '" : "'") + out.devices[out.streams[streamOf[j]].device].name + "'";
      diags
          .error(a.range, formatv("collective '{0}' cannot access buffer '{1}' on device "
                                  "'{2}': it spans {3}, and each part touches its own "
                                  "device's memory",
                                  head.name, b.name, out.devices[b.device].name, spanned))
          .attachNote(b.range, formatv("'{0}' is declared here, on device '{1}'", b.name,
                                       out.devices[b.device].name));
    }
  }
  const std::string base = head.name;
  for (uint32_t k = 0; k < parts; ++k) {
    Stage &part = out.stages[first + k];
    if (k > 0)
      part = out.stages[first];
    part.stream = streamOf[k];
    part.accesses = std::move(partAccesses[k]);
    if (parts > 1 && known)
      part.name = base + ":" + out.devices[out.streams[streamOf[k]].device].name;
  }
}

/// `copy p2p ... to DEVICE` (version 4): the peer device it writes to.
void Sema::checkPeer(const ast::StageDecl &s, const Pipeline &out, const ast::Pipeline &p,
                     Stage &into) {
  bool p2p = isPeerCopy(into);
  if (p2p) {
    needsVersion(versionOf(CopyDirection::P2P), s.kindRange, "'copy p2p'");
    into.copy().peerDevice = kNoPeer;
  }
  if (!s.peer)
    return;
  if (!p2p) {
    diags.error(s.peer->range(),
                formatv("'to {0}' names the device a 'copy p2p' writes to; a {1} "
                        "stage stays on its stream's device",
                        s.peer->text,
                        into.kind() == StageKind::Copy
                            ? formatv("'copy {0}'", spelling(into.copy().direction)).str()
                            : std::string(spelling(into.kind()))));
    return;
  }
  // At most kMaxDevices devices: a scan is as quick as a map.
  for (size_t d = 0; d < out.devices.size(); ++d)
    if (out.devices[d].name == s.peer->text) {
      into.copy().peerDevice = static_cast<uint32_t>(d);
      return;
    }
  reportUnknown(*s.peer, "device", p.devices);
  into.copy().peerDevice = kUnknownDevice;
}

/// `on X` on a cpu stage: X names a device, whose host thread runs it; a
/// stage on a stream is an error.
void Sema::checkHostThread(const ast::StageDecl &s, Pipeline &out,
                           const llvm::StringMap<uint32_t> &streams, const ast::Pipeline &p,
                           Stage &into) {
  // At most kMaxDevices devices: a scan is as quick as a map.
  for (size_t d = 0; d < out.devices.size(); ++d)
    if (out.devices[d].name == s.stream->text) {
      into.cpu().hostDevice = static_cast<uint32_t>(d);
      return;
    }
  if (!out.devices.empty() && !streams.count(s.stream->text)) {
    reportUnknown(*s.stream, "device", p.devices);
    return;
  }
  // Work on the issuing host thread: it has no stream.
  diags.error(s.stream->range(),
              out.devices.empty()
                  ? formatv("cpu stage '{0}' cannot run on a stream: it runs on the host "
                            "thread that issues the pipeline, in issue order",
                            into.name)
                        .str()
                  : formatv("cpu stage '{0}' cannot run on a stream: it runs on a "
                            "device's host thread, in issue order; name the device, as in "
                            "'on {1}'",
                            into.name, out.devices.front().name)
                        .str());
}

/// A `copy p2p` has a peer, and it is another device than its source.
void Sema::checkPeerFound(const ast::StageDecl &s, const Pipeline &out, Stage &into) {
  if (into.copy().peerDevice == kUnknownDevice || version < 4)
    return; // reported
  if (out.devices.size() < 2) {
    diags.error(s.kindRange,
                formatv("copy p2p '{0}' goes from one device to another, and this "
                        "pipeline declares {1}; declare them with 'device NAME;'",
                        into.name, out.devices.empty() ? "none" : "one"));
    return;
  }
  if (into.copy().peerDevice == kNoPeer) {
    diags.error(s.kindRange,
                formatv("copy p2p '{0}' needs a peer device: write 'to DEVICE', or "
                        "write a buffer on that device",
                        into.name));
    return;
  }
  if (into.stream == kNoStream || out.streams[into.stream].device != into.copy().peerDevice)
    return;
  const std::string &device = out.devices[into.copy().peerDevice].name;
  diags.error(s.peer ? s.peer->range() : s.kindRange,
              formatv("copy p2p '{0}' copies from device '{1}' to itself: a peer copy "
                      "goes to another device; use 'copy d2d' within one",
                      into.name, device));
}

void Sema::checkDeps(const ast::StageDecl &s, uint32_t self, uint32_t iterations,
                     const llvm::StringMap<uint32_t> &stages, const ast::Pipeline &p,
                     Stage &into) {
  // (stage, distance) -> where first listed; inline for the usual few.
  llvm::SmallDenseMap<std::pair<uint32_t, uint32_t>, const ast::Dep *, 8> seen;
  for (const ast::Dep &d : s.deps) {
    uint32_t distance = 0;
    if (d.qualifier) {
      if (d.qualifier->text != "@prev") {
        diags.error(
            d.qualifier->range(),
            formatv("unknown qualifier '{0}'; the only one is '@prev'", d.qualifier->text));
        continue;
      }
      distance = 1;
      if (const std::optional<ast::IntLit> &k = d.qualifier->distance) {
        if (k->value < 1 || k->value > kMaxIterations) {
          diags.error(k->range,
                      formatv("'@prev(k)' must have k between 1 and {0}", kMaxIterations));
          continue;
        }
        distance = static_cast<uint32_t>(k->value);
      }
      // As written: '@prev' or '@prev(k)'.
      if (distance >= iterations)
        diags.warning(d.qualifier->range(),
                      formatv("'@prev{0}' has no effect in a pipeline with {1} iteration{2}",
                              d.qualifier->distance ? formatv("({0})", distance).str() : "",
                              iterations, iterations == 1 ? "" : "s"));
    }
    const bool prev = distance != 0;
    auto it = stages.find(d.stage.text);
    if (it == stages.end()) {
      reportUnknown(d.stage, "stage", stageNames);
      continue;
    }
    uint32_t target = it->second;
    if (target == self && !prev) {
      diags.error(d.stage.range(),
                  formatv("stage '{0}' depends on itself; write '{0}@prev' to "
                          "depend on its previous iteration",
                          d.stage.text));
      continue;
    }
    auto [seenIt, inserted] = seen.try_emplace({target, distance}, &d);
    if (!inserted) {
      std::string prevText = distance == 0   ? ""
                             : distance == 1 ? "@prev"
                                             : formatv("@prev({0})", distance).str();
      diags
          .warning(d.range,
                   formatv("duplicate dependency on '{0}{1}'", d.stage.text, prevText))
          .attachNote(seenIt->second->range, "first listed here");
      continue;
    }
    Dependency dep;
    dep.stage = target;
    dep.distance = distance;
    dep.range = d.range;
    into.deps.push_back(dep);
  }
}

void Sema::checkStage(const ast::StageDecl &s, uint32_t self, Pipeline &out,
                      const llvm::StringMap<uint32_t> &streams,
                      const llvm::StringMap<uint32_t> &stages,
                      const llvm::StringMap<uint32_t> &buffers, const ast::Pipeline &p,
                      std::vector<bool> &streamUsed, std::vector<bool> &bufferUsed,
                      Stage &into) {
  into.name = s.name.text;
  into.range = s.name.range();
  into.work = workFor(s);
  needsVersion(versionOf(s.kind), s.kindRange, nounOf(s.kind));
  const bool collective = s.kind == StageKind::Collective;
  if (collective) {
    if (!s.stream)
      diags.error(s.kindRange,
                  formatv("collective '{0}' needs a stream on each device it spans, as "
                          "in 'on (s0, s1)'; pipec does not choose them",
                          into.name));
  } else if (s.streamList) {
    diags.error(s.stream->range(),
                formatv("only a collective runs on several streams; a {0} stage runs on "
                        "one: 'on {1}'",
                        spelling(s.kind), s.stream->text));
  }
  if (!s.accesses.empty())
    needsVersion(2, s.accesses.front().range, "reads and writes");
  if (s.stream && onHostThread(s.kind)) {
    checkHostThread(s, out, streams, p, into);
  } else if (s.stream) {
    auto it = streams.find(s.stream->text);
    if (it == streams.end()) {
      reportUnknown(*s.stream, "stream", p.streams);
    } else {
      into.stream = static_cast<int32_t>(it->second);
      streamUsed[it->second] = true;
    }
  }
  if (!s.amount.empty() || s.kind != StageKind::Copy)
    checkWork(s, into);
  checkAttrs(s, into);
  checkPeer(s, out, p, into);
  checkAccesses(s, out, buffers, p, bufferUsed, into);
  // A pageable copy given a size (or a buffer's) moves it at the pageable
  // bandwidth: its host side is staged through a pinned buffer.
  if (isPageableCopy(into) && into.bytes)
    into.durationUs = profile.pageableCopyTimeUs(into.copy().direction, *into.bytes);
  if (isPageableCopy(into) && into.graph >= 0)
    diags.error(into.range,
                formatv("pageable copy '{0}' cannot be a node of a recorded graph: "
                        "its call holds the host until it is done",
                        into.name));
  if (isPeerCopy(into))
    checkPeerFound(s, out, into);
  if (CopyWork *copy = std::get_if<CopyWork>(&into.work); copy && copy->peerDevice >= kNoPeer)
    copy->peerDevice = 0; // reported: the program is not used
  if (!into.runs.always())
    for (const Access &a : into.accesses) {
      const Buffer &b = out.buffers[a.buffer];
      if (b.slots > 1)
        diags
            .error(a.range,
                   formatv("stage '{0}' runs only in some iterations and cannot access "
                           "ring '{1}' ({2} slots): the slot an access touches follows "
                           "the iteration, and which write a read sees would depend on "
                           "the iterations the stage skips",
                           into.name, b.name, b.slots))
            .attachNote(b.range, formatv("'{0}' is declared here; a stage that runs in "
                                         "some iterations may use buffers of one slot",
                                         b.name));
    }
  checkDeps(s, self, out.iterations, stages, p, into);
}

std::optional<Pipeline> Sema::checkPipeline(const ast::Pipeline &p, ast::Pipeline *release) {
  unsigned errorsBefore = diags.errorCount();
  constants.emplace(diags);
  constants->declare(p.constants);
  Pipeline out;
  out.name = p.name.text;
  out.range = p.name.range();
  llvm::SMRange iterationsAt = p.name.range();
  out.iterations = checkIterations(p, iterationsAt);

  out.syncDeclared = checkSync(p);
  llvm::StringMap<uint32_t> devices, streams;
  checkDevices(p, out, devices);
  checkStreams(p, out, devices, streams);
  llvm::StringMap<uint32_t> buffers;
  checkBuffers(p, out, devices, buffers);

  // Index every stage first: a stage may depend on one declared later.
  // Their names stay when the declarations go (for "did you mean").
  llvm::StringMap<uint32_t> stages(static_cast<unsigned>(p.stages.size()));
  std::vector<bool> redefined(p.stages.size(), false);
  std::vector<size_t> declOf; // out.stages index -> p.stages index
  declOf.reserve(p.stages.size());
  stageNames.clear();
  stageNames.reserve(p.stages.size());
  indexes.erase(&stageNames); // "did you mean" indexes this pipeline's names
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const ast::StageDecl &s = p.stages[i];
    stageNames.push_back(s.name);
    if (tooLong(s.name)) {
      redefined[i] = true; // checked, then dropped
      continue;
    }
    if (s.deps.size() > kMaxDependencies)
      diags.error(s.name.range(), formatv("stage '{0}' has too many dependencies ({1}); the "
                                          "limit is {2}",
                                          s.name.text, s.deps.size(), kMaxDependencies));
    auto [it, inserted] =
        stages.try_emplace(s.name.text, static_cast<uint32_t>(declOf.size()));
    if (!inserted) {
      diags.error(s.name.range(), formatv("redefinition of stage '{0}'", s.name.text))
          .attachNote(p.stages[declOf[it->second]].name.range(), kPrevious);
      redefined[i] = true;
      continue;
    }
    // A collective: a part per stream it lists, one after another.
    size_t parts = partsOf(s);
    for (size_t k = 0; k < parts; ++k)
      declOf.push_back(i);
  }
  // The program's stages are built one declaration at a time, and each
  // chunk of declarations is freed once read: the two lists, the largest
  // of a flat file, are never held whole at once (reserved, the program's
  // pages are touched only as it is written).
  out.stages.reserve(declOf.size());
  std::vector<bool> streamUsed(out.streams.size(), false);
  std::vector<bool> bufferUsed(out.buffers.size(), false);
  uint32_t next = 0;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (redefined[i]) {
      Stage ignored; // checked for errors, then dropped
      checkStage(p.stages[i], UINT32_MAX, out, streams, stages, buffers, p, streamUsed,
                 bufferUsed, ignored);
    } else {
      out.stages.resize(next + partsOf(p.stages[i]));
      checkStage(p.stages[i], next, out, streams, stages, buffers, p, streamUsed, bufferUsed,
                 out.stages[next]);
      if (p.stages[i].kind == StageKind::Collective) {
        checkCollective(p.stages[i], next, out, streams, p, streamUsed);
        next += std::max<uint32_t>(1, out.stages[next].collective().parts);
      } else if (partsOf(p.stages[i]) == 2) {
        // A pageable copy's wait, on the host thread of the copy's device.
        const Stage &copy = out.stages[next];
        const uint32_t device = copy.stream >= 0 && size_t(copy.stream) < out.streams.size()
                                    ? out.streams[copy.stream].device
                                    : 0;
        out.stages[next + 1] = program::pageableWait(copy, next, device);
        next += 2;
      } else {
        ++next;
      }
    }
    if (release)
      release->stages.releaseBefore(i + 1);
  }
  if (release) {
    release->stages.clear();
    llvm::StringMap<uint32_t>().swap(stages);
  }
  checkRecordedGraphs(out);
  for (size_t i = 0; i < out.streams.size(); ++i)
    if (!streamUsed[i])
      diags.warning(out.streams[i].range, formatv("unused stream '{0}'", out.streams[i].name));
  for (size_t i = 0; i < out.buffers.size(); ++i)
    if (!bufferUsed[i])
      diags.warning(out.buffers[i].range, formatv("unused buffer '{0}'", out.buffers[i].name));
  if (!out.devices.empty()) {
    std::vector<bool> hasStream(out.devices.size(), false);
    for (const Stream &stream : out.streams)
      hasStream[stream.device] = true;
    for (size_t i = 0; i < out.devices.size(); ++i)
      if (!hasStream[i])
        diags.warning(
            out.devices[i].range,
            formatv("device '{0}' has no stream; nothing runs on it", out.devices[i].name));
  }
  if (out.devices.size() > 1)
    for (const Stage &stage : out.stages)
      if (unpinned(stage) && !isCollective(stage)) // a collective's is reported
        diags.error(stage.range,
                    formatv("stage '{0}' needs a stream: in a pipeline of several devices "
                            "pipec does not choose one; put it 'on' a stream of the device "
                            "it runs on",
                            stage.name));
  constants->warnUnused();
  if (diags.errorCount() == errorsBefore)
    program::spreadCollectives(out);

  if (diags.errorCount() == errorsBefore)
    markState(out);
  if (diags.errorCount() == errorsBefore && !out.syncDeclared)
    inferDataDependencies(out);
  checkCycles(out);

  checkSize(out, iterationsAt);
  if (diags.errorCount() != errorsBefore)
    return std::nullopt;
  return out;
}

Program pipec::analyze(const ast::File &file, const DeviceProfile &profile,
                       DiagnosticEngine &out, const SemaOptions &options) {
  Sema sema(profile, options);
  Program program = sema.run(file, out.hadError(), nullptr);
  sema.flush(out);
  return program;
}

Program pipec::analyze(ast::File &&file, const DeviceProfile &profile, DiagnosticEngine &out,
                       const SemaOptions &options) {
  Sema sema(profile, options);
  Program program = sema.run(file, out.hadError(), &file);
  sema.flush(out);
  return program;
}
