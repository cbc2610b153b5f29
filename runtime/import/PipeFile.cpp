//===- PipeFile.cpp -------------------------------------------------------===//

#include "runtime/import/PipeFile.h"

#include "compiler/program/TimeFormat.h"
#include "compiler/sema/Units.h"
#include "compiler/support/Chunks.h"
#include "compiler/support/Fail.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <thread>

using namespace pipec;
using namespace pipec::importer;
using llvm::formatv;

importer::Time importer::timeOf(double us) {
  // Three decimals, correctly rounded as printf's "%.3f" is (and without
  // its cost: a million stages write two or three times each).
  char digits[64];
  auto written = std::to_chars(digits, digits + sizeof digits, std::max(0.0, us),
                               std::chars_format::fixed, 3);
  llvm::StringRef number(digits, size_t(written.ptr - digits));
  number = number.rtrim('0');
  if (number.endswith("."))
    number = number.drop_back();
  return {(number + "us").str(), sema::parseQuantity(number, "us").micros};
}

std::string importer::timeText(double us) { return timeOf(us).text; }

void importer::trimComment(std::string &comment) {
  while (!comment.empty() && comment.back() == ' ')
    comment.pop_back();
}

std::string importer::streamName(int64_t id) {
  return id >= 0 ? "s" + std::to_string(id)
                 : "s_neg" + std::to_string(uint64_t(0) - uint64_t(id));
}

int64_t importer::streamPriorityOf(const ImportedStep &s, int64_t stream,
                                   const DeviceProfile &profile) {
  auto known = s.streamPriority.find(stream);
  if (known == s.streamPriority.end())
    return 0;
  return std::clamp<int64_t>(known->second, profile.priorityGreatest, profile.priorityLeast);
}

std::string importer::pipelineName(const ImportedStep &s) {
  if (s.step && !s.rangeName.empty()) {
    // The range's name as an identifier: its words (letters and digits),
    // joined by '_' ("## forward ##" -> "forward").
    std::string name;
    for (char c : s.rangeName) {
      if (std::isalnum(static_cast<unsigned char>(c)))
        name += c;
      else if (!name.empty() && name.back() != '_')
        name += '_';
    }
    while (!name.empty() && name.back() == '_')
      name.pop_back();
    if (name.size() > 64)
      name.resize(64);
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0])))
      name = "range_" + name;
    return name + "_" + (*s.step >= 0 ? std::to_string(*s.step) : "neg");
  }
  return !s.step        ? "trace"
         : *s.step >= 0 ? "step_" + std::to_string(*s.step)
                        : "step_neg" + std::to_string(uint64_t(0) - uint64_t(*s.step));
}

void importer::addCommentText(std::string &to, llvm::StringRef text) {
  const size_t from = to.size();
  to.append(text.data(), text.size());
  for (size_t i = from; i < to.size(); ++i)
    if (static_cast<unsigned char>(to[i]) < 0x20 || to[i] == 0x7f)
      to[i] = ' ';
}

namespace {

/// A recorded grid of more waves than its recorded time could run (each
/// under kLeastWaveUs, on the recorded GPU or on the default one a file is
/// checked with: no GPU retires a wave of blocks that fast, so the grid or
/// the time is wrong): written as the most whole waves the time allows,
/// the time kept, and said in the stage's comment. (Else the file would
/// warn, on every command, of a wave no real kernel takes.)
void fitWaves(program::Stage &s, const DeviceProfile &recorded, StageLine &line) {
  program::KernelWork &k = s.kernel();
  uint64_t perWave = 0;
  static const DeviceProfile kDefault;
  for (const DeviceProfile *p : {&recorded, &kDefault}) {
    const uint64_t wave = uint64_t(p->blocksPerSM(k.threads, k.smemBytes, k.regs)) * p->sms;
    if (wave && (!perWave || wave < perWave))
      perWave = wave;
  }
  // (The time is as the file writes it; a quarter microsecond divides it
  // exactly in binary.)
  const uint64_t most = std::max<uint64_t>(1, uint64_t(s.durationUs / sema::kLeastWaveUs));
  if (!perWave || k.blocks <= most * perWave)
    return;
  const uint64_t recordedBlocks = k.blocks;
  k.blocks = uint32_t(std::min<uint64_t>(most * perWave, k.blocks));
  line.note = formatv("recorded with a grid of {0} blocks, more waves than {1} can run "
                      "(under 250 ns each): written as {2}",
                      recordedBlocks, formatTime(s.durationUs), k.blocks)
                  .str();
}

} // namespace

llvm::Error importer::describe(const ImportedStep &step, const ImportedStage &st,
                               const DeviceProfile &profile, StageLine &line) {
  program::Stage &s = line.stage;
  s = program::Stage();
  line.work.clear();
  line.attrs.clear();
  line.note.clear();
  auto attribute = [&](llvm::StringRef name, llvm::StringRef value) {
    line.attrs += line.attrs.empty() ? "[" : ", ";
    line.attrs += name;
    line.attrs += '=';
    line.attrs += value;
  };
  if (st.onHost()) {
    Time t = timeOf(cpuTimeUs(st, profile));
    s.work = program::CpuWork{};
    s.durationUs = t.us;
    line.work = "cpu " + t.text;
    return llvm::Error::success();
  }
  const GpuOp &op = step.opOf(st);
  Time t = timeOf(st.durUs);
  s.durationUs = t.us;
  s.graph = st.graphLaunch;
  if (st.idle) { // the stream's wait the trace does not explain: one block
    s.work = program::KernelWork{};
    s.kernel().blocks = 1;
    s.kernel().threads = 32;
    line.work = "kernel " + t.text;
    attribute("blocks", "1");
    attribute("threads", "32");
  } else
    switch (op.kind) {
    case OpKind::Kernel: {
      uint64_t threads = std::clamp<uint64_t>(op.threads, 1, 1024);
      // The block must fit the recorded GPU's SM, as it did when it ran.
      if (profile.blocksPerSM(uint32_t(threads)) == 0)
        return fail(formatv("event {0} (kernel '{1}'): a block of {2} threads does not "
                            "fit on one SM of the recorded GPU ({3} threads per SM)",
                            op.event, st.name, threads, profile.maxThreadsPerSM));
      s.work = program::KernelWork{};
      s.kernel().blocks = uint32_t(std::clamp<uint64_t>(op.blocks, 1, 2147483647));
      s.kernel().threads = uint32_t(threads);
      bool smemFits = op.smem && op.smem <= profile.sharedMemoryPerBlock;
      bool regsFit = op.regs >= 1 && op.regs <= 255;
      if (smemFits || regsFit) {
        // Only what keeps one block on one SM, as the device allowed it.
        s.kernel().smemBytes = smemFits ? op.smem : 0;
        s.kernel().regs = regsFit ? op.regs : 0;
        if (profile.blocksPerSM(s.kernel().threads, s.kernel().smemBytes, s.kernel().regs) ==
            0)
          s.kernel().smemBytes = 0, s.kernel().regs = 0;
      }
      fitWaves(s, profile, line);
      line.work = "kernel " + t.text;
      attribute("blocks", std::to_string(s.kernel().blocks));
      attribute("threads", std::to_string(s.kernel().threads));
      if (s.kernel().smemBytes)
        attribute("smem", std::to_string(s.kernel().smemBytes));
      if (s.kernel().regs)
        attribute("regs", std::to_string(s.kernel().regs));
      break;
    }
    case OpKind::Memcpy:
      s.work = program::CopyWork{};
      s.copy().direction = op.direction;
      s.copy().pageable = st.pageable;
      line.work = (llvm::Twine("copy ") + spelling(op.direction) + " " + t.text).str();
      break;
    case OpKind::Memset:
      s.work = program::MemsetWork{};
      line.work = "memset " + t.text;
      break;
    }
  // The launch's dispatch less what the model charges for the call (a
  // graph launch's, for the first node of one).
  double issue =
      st.dispatchUs - (st.graphLaunch >= 0 ? profile.graphLaunchUs : profile.launchUs);
  if (issue >= 0.0005) {
    Time i = timeOf(issue);
    s.issueUs = i.us;
    attribute("issue", i.text);
  }
  if (st.graphLaunch >= 0)
    attribute("graph", std::to_string(st.graphLaunch));
  if (st.pageable) // (no value)
    line.attrs += line.attrs.empty() ? "[pageable" : ", pageable";
  if (!line.attrs.empty())
    line.attrs += ']';
  return llvm::Error::success();
}

namespace {

/// The columns of a stage's line beside its kind and time: `on`, the
/// dependencies, and the comment after it.
struct StageCells {
  std::string on, access, deps, comment;

  void make(const ImportedStep &s, const ImportedStage &st, llvm::StringRef stream) {
    on.clear();
    if (!st.onHost())
      on = ("on " + stream).str();
    access.clear();
    auto list = [&](const char *what, const std::vector<uint32_t> &buffers) {
      for (size_t i = 0; i < buffers.size(); ++i) {
        access += i ? ", " : (access.empty() ? what : std::string(" ") + what);
        access += s.buffers[buffers[i]].name;
      }
      if (!buffers.empty())
        access += ')';
    };
    list("reads(", st.reads);
    list("writes(", st.writes);
    deps.clear();
    for (size_t i = 0; i < st.deps.size(); ++i) {
      deps += i ? ", " : "depends_on(";
      deps += s.stages[st.deps[i]].name;
    }
    if (!deps.empty())
      deps += ')';
    comment = "// " + stageComment(s, st);
    trimComment(comment);
  }
};

} // namespace

std::string importer::stageComment(const ImportedStep &s, const ImportedStage &st) {
  std::string comment;
  switch (st.kind) {
  case ImportedStage::Kind::Op:
    if (st.idle) {
      comment += "the next op on this stream waited this long after what it follows, for "
                 "what the trace does not show";
      break;
    }
    addCommentText(comment, s.names[s.opOf(st).name]);
    if (s.opOf(st).bytes)
      comment += ", " + std::to_string(s.opOf(st).bytes) + " B";
    if (st.blocking)
      comment += st.waitedForGpu
                     ? "; the call waited for the GPU and returned once it was done"
                     : "; the call held the host while the copy ran";
    if (st.queueFull)
      comment += "; the launch waited for room in the driver's full launch queue";
    if (st.graphLaunched)
      comment += "; launched by cudaGraphLaunch";
    if (st.recordedUs > 0)
      comment += "; recorded " + timeOf(st.recordedUs).text + " beside other kernels";
    break;
  case ImportedStage::Kind::Sync:
    comment += st.call == HostCall::StreamSync   ? "cudaStreamSynchronize"
               : st.call == HostCall::EventSync  ? "cudaEventSynchronize"
               : st.call == HostCall::DeviceSync ? "cudaDeviceSynchronize"
               : st.call == HostCall::Free       ? "cudaFree, which synchronises the device"
               : st.call == HostCall::Poll
                   ? "the host polled cudaEventQuery/cudaStreamQuery until the GPU was done"
                   : "the copy's call blocked";
    comment += ", returned " + timeOf(st.returnUs).text + " into the step";
    break;
  case ImportedStage::Kind::HostWork:
    using At = ImportedStage::HostWorkAt;
    comment += st.hostWorkAt == At::BeforeFirstCall
                   ? "the host, from the step's start to its first runtime call"
               : st.hostWorkAt == At::AfterLastCall
                   ? "the host, from its last runtime call to the step's end"
                   : "the host, between runtime calls";
    if (st.within != UINT32_MAX) {
      comment += ", in ";
      addCommentText(comment, s.hostRanges[st.within]);
    }
    break;
  case ImportedStage::Kind::Call:
    addCommentText(comment, s.callNames[st.callName]);
    comment += ", a runtime call's own time";
    break;
  }
  return comment;
}

llvm::Error importer::checkSize(const sema::PipelineSize &size, llvm::StringRef what) {
  if (std::optional<std::string> problem = sema::sizeProblem(size))
    return fail(what + " is more than a .pipe pipeline may hold: " + *problem);
  return llvm::Error::success();
}

/// The step's program's size: its stages, their dependencies, its streams.
static sema::PipelineSize sizeOf(const ImportedStep &s) {
  sema::PipelineSize size;
  size.stages = s.stages.size();
  for (const ImportedStage &st : s.stages)
    size.edges += st.deps.size();
  size.streams = s.streams.size();
  return size;
}

llvm::Expected<PipeFile> PipeFile::lay(const ImportedStep &s, llvm::StringRef source,
                                       const DeviceProfile &profile) {
  if (llvm::Error e = checkSize(sizeOf(s), "the step"))
    return e;
  PipeFile file(s, profile);
  std::string &h = file.header;
  auto commentLine = [&](const llvm::Twine &text) {
    std::string line = text.str();
    trimComment(line);
    h += line;
    h += '\n';
  };
  std::string from = "// Imported by pipec from ";
  addCommentText(from, source);
  if (s.step)
    from += ", " + stepLabel(s);
  size_t onHost = std::count_if(s.stages.begin(), s.stages.end(),
                                [](const ImportedStage &st) { return st.onHost(); });
  from += formatv(": {0} GPU ops on {1} stream(s) and {2} cpu stage(s)",
                  s.stages.size() - onHost, s.streams.size(), onHost)
              .str();
  if (!s.device.name.empty()) {
    from += ", recorded on ";
    addCommentText(from, s.device.name);
  }
  commentLine(from + ".");
  h += "// Each GPU op is a stage with its measured time; issue= is the host's time\n"
       "// before its launch call (dispatch). cpu stages are the host's syncs (each\n"
       "// depends on what it waited for) and its work between calls. Every ordering\n";
  if (!s.data) {
    h += "// the recording relies on is a dependency, same-stream order included.\n";
  } else {
    h += "// the recording relies on is a dependency, same-stream order included, but\n"
         "// between two ops that declare their data (reads and writes, from the\n"
         "// execution trace), launched by two framework ops: the data orders those.\n";
  }
  for (const std::string &note : s.notes) {
    std::string line = "// Note: ";
    addCommentText(line, note);
    commentLine(line);
  }
  if (s.backlogOps)
    h += "// backlog_ stages were issued in the step before and still ran in this one\n"
         "// (the part inside it).\n";
  h += "pipeline " + pipelineName(s) + " {\n";

  for (int64_t id : s.streams) {
    file.streamIndex[id] = uint32_t(file.streamNames.size());
    file.streamNames.push_back(streamName(id));
    const int64_t priority = streamPriorityOf(s, id, profile);
    file.streamPriorities.push_back(priority ? "priority " + std::to_string(priority) : "");
    file.streamColumns.fit({file.streamNames.back(), "", file.streamPriorities.back()});
  }
  for (const ImportedBuffer &b : s.buffers) {
    file.bufferSizes.push_back(std::to_string(b.bytes) + "B");
    file.bufferColumns.fit(
        {b.name, file.bufferSizes.back(), b.host ? "host" : "", b.state ? "state" : ""});
  }
  // The stages' columns, a half on each of two threads for a long step
  // (the first error in the file's order is the one reported).
  auto fit = [&](size_t begin, size_t end, Columns &columns) -> llvm::Error {
    StageLine line;
    StageCells cells;
    for (size_t i = begin; i < end; ++i) {
      const ImportedStage &st = s.stages[i];
      if (st.waitOfCopy) // the reader makes it, from the copy's [pageable]
        continue;
      if (llvm::Error e = describe(s, st, profile, line))
        return e;
      cells.make(s, st,
                 st.onHost() ? "" : file.streamNames[file.streamIndex.at(s.opOf(st).stream)]);
      columns.fit({st.name, cells.on, line.work, line.attrs, cells.access, cells.deps});
    }
    return llvm::Error::success();
  };
  const size_t n = s.stages.size(), half = n / 2;
  if (n <= 2 * kChunkItems) {
    if (llvm::Error e = fit(0, n, file.stageColumns))
      return e;
    return file;
  }
  Columns second(6);
  llvm::Error secondError = llvm::Error::success();
  std::thread helper([&] { secondError = fit(half, n, second); });
  llvm::Error firstError = fit(0, half, file.stageColumns);
  helper.join();
  if (firstError) {
    llvm::consumeError(std::move(secondError));
    return firstError;
  }
  if (secondError)
    return secondError;
  file.stageColumns.fit(second);
  return file;
}

void PipeFile::write(llvm::raw_ostream &os) const {
  os << header;
  std::string out;
  for (size_t i = 0; i < streamNames.size(); ++i)
    streamColumns.write(out, "stream", {streamNames[i], "", streamPriorities[i]}, "");
  for (size_t i = 0; i < step->buffers.size(); ++i)
    bufferColumns.write(out, "buffer",
                        {step->buffers[i].name, bufferSizes[i],
                         step->buffers[i].host ? "host" : "",
                         step->buffers[i].state ? "state" : ""},
                        "");
  os << out;
  // A long step's lines are made a chunk at a time on two threads.
  writeInChunks(step->stages.size(), os, [&](size_t begin, size_t end, llvm::raw_ostream &os) {
    StageLine line;
    StageCells cells;
    std::string out;
    for (size_t i = begin; i < end; ++i) {
      const ImportedStage &st = step->stages[i];
      if (st.waitOfCopy) // the reader makes it, from the copy's [pageable]
        continue;
      // lay() described every stage without an error.
      llvm::cantFail(describe(*step, st, *profile, line));
      cells.make(*step, st,
                 st.onHost() ? "" : streamNames[streamIndex.at(step->opOf(st).stream)]);
      if (!line.note.empty())
        cells.comment += "; " + line.note;
      out.clear();
      stageColumns.write(out, "stage",
                         {st.name, cells.on, line.work, line.attrs, cells.access, cells.deps},
                         cells.comment);
      os << out;
    }
  });
  os << "}\n";
}

llvm::Expected<std::string> importer::writePipe(const ImportedStep &step,
                                                llvm::StringRef source,
                                                const DeviceProfile &profile) {
  llvm::Expected<PipeFile> file = PipeFile::lay(step, source, profile);
  if (!file)
    return file.takeError();
  std::string text;
  llvm::raw_string_ostream os(text);
  file->write(os);
  os.flush();
  return text;
}

llvm::Expected<program::Program> importer::programOf(const ImportedStep &s,
                                                     const DeviceProfile &profile) {
  if (llvm::Error e = checkSize(sizeOf(s), "the step"))
    return e;
  program::Program out;
  out.source = "imported.pipe";
  program::Pipeline &p = out.pipelines.emplace_back();
  p.name = pipelineName(s);
  std::map<int64_t, uint32_t> streamIndex;
  for (int64_t id : s.streams) {
    streamIndex[id] = uint32_t(p.streams.size());
    program::Stream &stream = p.streams.emplace_back();
    stream.name = streamName(id);
    stream.cudaPriority = profile.priorityFor(program::PriorityClass::Normal);
    if (int64_t priority = streamPriorityOf(s, id, profile)) {
      stream.priorityClass = program::PriorityClass::Raw;
      stream.rawPriority = priority;
      stream.cudaPriority = int(priority);
    }
  }
  for (const ImportedBuffer &b : s.buffers) {
    program::Buffer &buffer = p.buffers.emplace_back();
    buffer.name = b.name;
    buffer.bytes = b.bytes;
    buffer.host = b.host;
    buffer.state = buffer.stateDeclared = b.state;
  }
  p.stages.reserve(s.stages.size());
  StageLine line;
  for (const ImportedStage &st : s.stages) {
    if (st.waitOfCopy) { // as the file's reader makes it
      const uint32_t copy = uint32_t(p.stages.size() - 1);
      p.stages.push_back(program::pageableWait(p.stages[copy], copy, 0));
      continue;
    }
    if (llvm::Error e = describe(s, st, profile, line))
      return e;
    program::Stage &stage = p.stages.emplace_back(std::move(line.stage));
    stage.name = st.name;
    if (!st.onHost())
      stage.stream = int32_t(streamIndex.at(s.opOf(st).stream));
    stage.deps.reserve(st.deps.size());
    for (uint32_t d : st.deps)
      stage.deps.push_back(program::Dependency{d, 0, {}, -1});
    for (uint32_t b : st.reads)
      stage.accesses.push_back(program::Access{b, false, {}, 0});
    for (uint32_t b : st.writes)
      stage.accesses.push_back(program::Access{b, true, {}, 0});
  }
  if (!p.buffers.empty()) { // as the file's reader marks and infers them
    program::markLoopCarried(p);
    inferDataDependencies(p);
  }
  return out;
}
