//===- Ranks.cpp ----------------------------------------------------------===//

#include "runtime/import/Ranks.h"

#include "compiler/program/Communication.h"

#include "runtime/import/PipeFile.h"

#include "compiler/format/Columns.h"
#include "compiler/sema/Sema.h"
#include "compiler/support/Fail.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <map>

using namespace pipec;
using namespace pipec::importer;
using llvm::formatv;

std::optional<program::CollectiveOp> importer::ncclCollective(llvm::StringRef name) {
  // "ncclKernel_AllReduce_RING_LL_Sum_float(...)" (NCCL 2.x before 2.19),
  // "ncclDevKernel_AllGather_RING_LL(...)" (2.19 on); "void " may lead.
  name.consume_front("void ");
  if (!name.startswith("ncclKernel_") && !name.startswith("ncclDevKernel_"))
    return std::nullopt;
  llvm::StringRef kind = name.split('_').second;
  using program::CollectiveOp;
  if (kind.startswith("AllReduce"))
    return CollectiveOp::AllReduce;
  if (kind.startswith("AllGather"))
    return CollectiveOp::AllGather;
  if (kind.startswith("ReduceScatter"))
    return CollectiveOp::ReduceScatter;
  if (kind.startswith("Broadcast"))
    return CollectiveOp::Broadcast;
  return std::nullopt;
}

namespace {

/// Each rank's collective kernels, in issue order: (stage, what it runs).
using Collectives = std::vector<std::pair<uint32_t, program::CollectiveOp>>;

Collectives collectivesOf(const ImportedStep &s) {
  Collectives out;
  for (uint32_t i = 0; i < s.stages.size(); ++i) {
    const ImportedStage &st = s.stages[i];
    // A backlog op belongs to the step before: the ranks' need not agree.
    if (st.onHost() || st.backlog || st.idle || s.opOf(st).kind != OpKind::Kernel)
      continue;
    if (auto op = ncclCollective(s.names[s.opOf(st).name]))
      out.push_back({i, *op});
  }
  return out;
}

} // namespace

unsigned importer::ncclChannelsOf(const std::vector<Rank> &ranks) {
  // NCCL launches a block per channel: the grid its kernels ran with, the
  // most common over every rank's collectives (a grid of one block is a
  // single-rank copy or a tiny message, and says nothing).
  std::map<uint64_t, size_t> grids;
  for (const Rank &rank : ranks)
    for (const auto &[stage, op] : collectivesOf(rank.step)) {
      const uint64_t blocks = rank.step.opOf(rank.step.stages[stage]).blocks;
      if (blocks > 1 && blocks <= 64)
        ++grids[blocks];
    }
  uint64_t most = 0;
  size_t seen = 0;
  for (const auto &[blocks, count] : grids)
    if (count > seen)
      most = blocks, seen = count;
  return static_cast<unsigned>(most);
}

namespace {

/// When the rank's host was into the step, on the trace's clock: where its
/// host work before its first call began (the step's start), or else when
/// its first launch call (of an op issued in the step) returned. (The
/// model's thread returns from it a launch's cost after it starts, on
/// every rank.)
double hostBeginTs(const ImportedStep &s) {
  for (const ImportedStage &st : s.stages)
    if (st.kind == ImportedStage::Kind::HostWork || (!st.onHost() && !st.backlog))
      return s.originTs + st.hostUs; // (host work: when the host began it)
  return s.originTs;
}

/// The ranks on one clock, where their steps overlap on it: each rank's
/// delay, and the span of them all.
void alignStarts(const std::vector<Rank> &ranks, RanksSummary &summary) {
  const size_t n = ranks.size();
  std::vector<double> begin(n), from(n), to(n);
  double longest = 0;
  for (size_t r = 0; r < n; ++r) {
    const ImportedStep &s = ranks[r].step;
    double end = 0;
    for (const ImportedStage &st : s.stages)
      if (!st.onHost())
        end = std::max(end, st.endUs);
    begin[r] = hostBeginTs(s);
    from[r] = s.originTs;
    to[r] = s.originTs + end;
    longest = std::max(longest, end);
  }
  const double first = *std::min_element(from.begin(), from.end());
  const double last = *std::max_element(to.begin(), to.end());
  const double firstBegin = *std::min_element(begin.begin(), begin.end());
  // Steps that do not overlap were not recorded on one clock (or not in
  // step): each rank then starts at once, and each is compared on its own.
  const double firstEnd = *std::min_element(to.begin(), to.end());
  bool overlap = true;
  for (size_t r = 0; r < n; ++r)
    overlap &= from[r] < firstEnd;
  summary.startDelayUs.assign(n, 0);
  summary.recordedSpanUs = longest;
  if (!overlap) {
    summary.notes.push_back("the ranks' steps do not overlap on the traces' clocks (not "
                            "recorded on one clock, or not the same step): each rank's host "
                            "starts the step at once, and only each rank's own span is "
                            "compared");
    return;
  }
  summary.aligned = true;
  summary.recordedSpanUs = last - first;
  for (size_t r = 0; r < n; ++r)
    summary.startDelayUs[r] = begin[r] - firstBegin;
}

} // namespace

llvm::Expected<RanksFile> importer::writeRanks(const std::vector<Rank> &ranks,
                                               const DeviceProfile &profile,
                                               RanksSummary &summary, bool withProgram) {
  const size_t n = ranks.size();
  // Every rank's streams are streams of the one pipeline: more than it may
  // declare is said here, not as a diagnostic on the file it would be.
  size_t streams = 0;
  for (const Rank &rank : ranks)
    streams += rank.step.streams.size();
  if (streams > kMaxStreams)
    return fail(formatv("the {0} ranks' GPU ops run on {1} streams in all; a .pipe pipeline "
                        "has at most {2} (import fewer ranks)",
                        n, streams, kMaxStreams)
                    .str());
  std::vector<Collectives> collectives(n);
  for (size_t r = 0; r < n; ++r)
    collectives[r] = collectivesOf(ranks[r].step);
  // The k-th collective of every rank is one, while they agree on what it
  // runs; from the first disagreement on, each rank's are its own kernels.
  size_t matched = 0;
  for (;; ++matched) {
    bool agree = true;
    for (size_t r = 0; r < n && agree; ++r)
      agree = matched < collectives[r].size() &&
              collectives[r][matched].second == collectives[0][matched].second;
    if (!agree)
      break;
  }
  summary = RanksSummary();
  summary.collectives = matched;
  alignStarts(ranks, summary);
  for (size_t r = 0; r < n; ++r) {
    summary.unmatched += collectives[r].size() - matched;
    if (collectives[r].size() > matched)
      summary.notes.push_back(formatv(
          "rank {0}: {1} NCCL collective kernel(s), from its collective #{2} on, match "
          "no other rank's (the ranks differ there in number or kind); they stay rank "
          "{0}'s own kernels",
          r, collectives[r].size() - matched, matched + 1));
    // Point-to-point kernels (pipeline parallelism's sends and receives,
    // NCCL's SendRecv) pair with a peer the trace does not name: kept as
    // the rank's kernels, their recorded time the wait for the peer too.
    size_t p2p = 0;
    for (const ImportedStage &st : ranks[r].step.stages)
      if (!st.onHost() && !st.idle && ranks[r].step.opOf(st).kind == OpKind::Kernel) {
        llvm::StringRef name = ranks[r].step.names[ranks[r].step.opOf(st).name];
        p2p += program::isCommunicationKernel(name) && !ncclCollective(name);
      }
    if (p2p)
      summary.notes.push_back(formatv(
          "rank {0}: {1} point-to-point or all-to-all kernel(s) (NCCL SendRecv, expert "
          "parallelism's dispatch and combine) are not matched across ranks: the trace does "
          "not say which rank each one's peer is; they stay rank {0}'s own kernels, their "
          "recorded times the wait for the peer included",
          r, p2p));
    for (const std::string &note : ranks[r].step.notes)
      summary.notes.push_back(formatv("rank {0}: {1}", r, note));
  }

  // Each rank's stages by their new names: r<rank>_<name>, or the
  // collective's, <op>_<k>. Every name is held once, as a key of `taken`
  // (the stages pipec adds take a name no imported stage has).
  llvm::StringSet<> taken;
  std::vector<std::vector<llvm::StringRef>> nameOf(n);
  std::vector<std::string> collectiveName(matched);
  for (size_t k = 0; k < matched; ++k)
    collectiveName[k] = formatv("{0}_{1}", spelling(collectives[0][k].second), k).str();
  std::string name;
  for (size_t r = 0; r < n; ++r) {
    const ImportedStep &s = ranks[r].step;
    nameOf[r].resize(s.stages.size());
    for (uint32_t i = 0; i < s.stages.size(); ++i) {
      name.clear();
      llvm::raw_string_ostream(name) << 'r' << r << '_' << s.stages[i].name;
      nameOf[r][i] = taken.insert(name).first->getKey();
    }
    for (size_t k = 0; k < matched; ++k)
      nameOf[r][collectives[r][k].first] = taken.insert(collectiveName[k]).first->getKey();
  }
  auto streamOf = [&](size_t r, int64_t id) {
    return formatv("r{0}_{1}", r, streamName(id)).str();
  };
  // A name for a stage pipec adds (a rank's start, a collective's dispatch).
  auto freshName = [&](const std::string &base) {
    std::string name = base;
    for (unsigned k = 2; !taken.insert(name).second; ++k)
      name = base + "_" + std::to_string(k);
    return name;
  };

  std::string t = "version 4;\n\n";
  std::string head = formatv("// Imported by pipec from the traces of {0} ranks", n).str();
  if (ranks[0].step.step)
    head += ", " + stepLabel(ranks[0].step);
  for (const Rank &rank : ranks)
    for (const ImportedStage &st : rank.step.stages)
      (st.onHost() ? summary.cpuStages : summary.gpuOps) += 1;
  head += formatv(": {0} GPU ops and {1} cpu stage(s), {2} collective(s) matched across "
                  "the ranks",
                  summary.gpuOps, summary.cpuStages, matched)
              .str();
  if (!ranks[0].step.device.name.empty()) {
    head += ", recorded on ";
    addCommentText(head, ranks[0].step.device.name);
  }
  t += head + ".\n";
  for (size_t r = 0; r < n; ++r) {
    std::string line = formatv("// rank{0}: ", r).str();
    addCommentText(line, ranks[r].source);
    t += line + "\n";
  }
  t += "// Each rank is a device with its own streams and host thread (its cpu\n"
       "// stages, its launches' issue=). The k-th NCCL collective of every rank is\n"
       "// one collective stage, with the time the last rank to join it measured.\n";
  for (const std::string &note : summary.notes) {
    std::string line = "// Note: ";
    addCommentText(line, note);
    t += line + "\n";
  }
  t += "pipeline " + pipelineName(ranks[0].step) + " {\n";
  for (size_t r = 0; r < n; ++r)
    t += formatv("  device rank{0};\n", r).str();
  // The program the file checks to, built beside it, line by line: what
  // sema would make of each line (tests hold the two to each other).
  RanksFile file;
  file.program.source = "imported.pipe";
  program::Pipeline &p = file.program.pipelines.emplace_back();
  p.name = pipelineName(ranks[0].step);
  std::vector<std::map<int64_t, uint32_t>> streamIndex(n);
  for (size_t r = 0; r < n; ++r) {
    p.devices.push_back({formatv("rank{0}", r).str(), {}});
    for (int64_t id : ranks[r].step.streams) {
      streamIndex[r][id] = uint32_t(p.streams.size());
      program::Stream &stream = p.streams.emplace_back();
      stream.name = streamOf(r, id);
      stream.device = uint32_t(r);
      stream.cudaPriority = profile.priorityFor(program::PriorityClass::Normal);
      if (int64_t priority = streamPriorityOf(ranks[r].step, id, profile)) {
        stream.priorityClass = program::PriorityClass::Raw;
        stream.rawPriority = priority;
        stream.cudaPriority = int(priority);
      }
    }
  }
  // Each rank's stages' indices in the program (a collective's: its first
  // part, as a dependency on it names it before spreadCollectives).
  std::vector<std::vector<uint32_t>> indexOf(n);
  for (size_t r = 0; r < n; ++r)
    indexOf[r].assign(ranks[r].step.stages.size(), 0);
  if (withProgram) {
    size_t stages = n;
    for (size_t r = 0; r < n; ++r)
      stages += ranks[r].step.stages.size() + matched;
    p.stages.reserve(stages);
    file.communicates.reserve(stages);
  }
  auto hostStage = [&](size_t r, std::string name, const Time &time) {
    if (!withProgram)
      return;
    program::Stage &stage = p.stages.emplace_back();
    file.communicates.push_back(false);
    stage.name = std::move(name);
    stage.work = program::CpuWork{};
    stage.durationUs = time.us;
    stage.cpu().hostDevice = uint32_t(r);
  };
  // The streams and the stages, in columns as fmt lays them out.
  Columns streamColumns(3);
  std::vector<std::array<std::string, 3>> streamRows;
  for (size_t r = 0; r < n; ++r)
    for (int64_t id : ranks[r].step.streams) {
      const int64_t priority = streamPriorityOf(ranks[r].step, id, profile);
      streamRows.push_back({streamOf(r, id), formatv("on rank{0}", r).str(),
                            priority ? "priority " + std::to_string(priority) : ""});
      streamColumns.fit({streamRows.back()[0], streamRows.back()[1], streamRows.back()[2]});
    }
  for (const auto &row : streamRows) {
    // "  stream NAME ...": where the name is, for a diagnostic at its line.
    file.streamNameAt.push_back(t.size() + 9);
    streamColumns.write(t, "stream", {row[0], row[1], row[2]}, "");
    assert(llvm::StringRef(t).substr(file.streamNameAt.back()).startswith(row[0]));
  }

  /// A stage's cells: name, on, work, attributes, (no accesses), deps; and
  /// the comment after it.
  struct Cells {
    std::string name, on, work, attrs, deps, comment;
  };
  // The same, held until the columns' widths are known as one string and
  // where each cell ends in it (a million stages: one allocation each).
  std::vector<RanksFile::Row> &rows = file.rows;
  Columns &stageColumns = file.stageColumns;
  {
    // At most: every stage, a start per rank, a dispatch per collective
    // and rank (reserved: a vector grown by doubling holds 1.5 times it).
    size_t most = n + matched * n;
    for (size_t r = 0; r < n; ++r)
      most += ranks[r].step.stages.size();
    rows.reserve(most);
  }
  auto add = [&](Cells c) {
    trimComment(c.comment);
    stageColumns.fit({c.name, c.on, c.work, c.attrs, "", c.deps});
    const size_t bytes = c.name.size() + c.on.size() + c.work.size() + c.attrs.size() +
                         c.deps.size() + c.comment.size();
    char *text = static_cast<char *>(file.rowText.Allocate(std::max<size_t>(bytes, 1), 1));
    RanksFile::Row row{text, {}};
    size_t i = 0, at = 0;
    for (const std::string *cell : {&c.name, &c.on, &c.work, &c.attrs, &c.deps, &c.comment}) {
      std::copy(cell->begin(), cell->end(), text + at);
      at += cell->size();
      row.end[i++] = static_cast<uint32_t>(at);
    }
    rows.push_back(row);
  };
  auto depsText = [](llvm::ArrayRef<llvm::StringRef> deps) {
    std::string out;
    for (size_t i = 0; i < deps.size(); ++i) {
      out += i ? ", " : "depends_on(";
      out += deps[i];
    }
    return deps.empty() ? out : out + ")";
  };
  StageLine line;
  auto rankStage = [&](size_t r, uint32_t i) -> llvm::Error {
    const ImportedStep &s = ranks[r].step;
    const ImportedStage &st = s.stages[i];
    // A version 4 file: a graph launch's ops are launched one by one (their
    // numbers would clash across ranks, and collectives split them).
    ImportedStage plain = st;
    plain.graphLaunch = -1;
    // (Nor [pageable], of version 6: the copy's sync is written instead.)
    plain.pageable = plain.waitOfCopy = false;
    if (llvm::Error e = describe(s, plain, profile, line))
      return e;
    if (st.deps.size() > kMaxDependencies)
      return fail(formatv("rank {0}: stage '{1}' has {2} dependencies; a stage may have at "
                          "most {3}",
                          r, st.name, st.deps.size(), kMaxDependencies)
                      .str());
    std::vector<llvm::StringRef> deps;
    for (uint32_t d : st.deps)
      deps.push_back(nameOf[r][d]);
    indexOf[r][i] = uint32_t(p.stages.size());
    if (withProgram) {
      program::Stage &stage = p.stages.emplace_back(std::move(line.stage));
      stage.name = nameOf[r][i].str();
      if (st.onHost())
        stage.cpu().hostDevice = uint32_t(r);
      else
        stage.stream = int32_t(streamIndex[r].at(s.opOf(st).stream));
      stage.deps.reserve(st.deps.size());
      for (uint32_t d : st.deps)
        stage.deps.push_back(program::Dependency{indexOf[r][d], 0, {}, -1});
      file.communicates.push_back(!st.onHost() && !st.idle &&
                                  program::isCommunication(stage, s.names[s.opOf(st).name]));
    }
    add({nameOf[r][i].str(),
         st.onHost() ? formatv("on rank{0}", r).str() : "on " + streamOf(r, s.opOf(st).stream),
         line.work, line.attrs, depsText(deps),
         "// " + stageComment(s, st) + (line.note.empty() ? "" : "; " + line.note)});
    return llvm::Error::success();
  };
  // A rank whose host began the step later than the first one's.
  for (size_t r = 0; r < n; ++r)
    if (summary.startDelayUs[r] >= 0.0005) {
      const Time delay = timeOf(summary.startDelayUs[r]);
      const std::string name = freshName(formatv("r{0}_start", r).str());
      hostStage(r, name, delay);
      add({name, formatv("on rank{0}", r).str(), "cpu " + delay.text, "", "",
           formatv("// its host began the step {0} after the first rank's", delay.text)
               .str()});
    }
  std::vector<uint32_t> next(n, 0);
  for (size_t k = 0; k <= matched; ++k) {
    // Each rank's stages before its k-th collective (the rest, at the end).
    for (size_t r = 0; r < n; ++r) {
      const uint32_t end = k < matched ? collectives[r][k].first
                                       : static_cast<uint32_t>(ranks[r].step.stages.size());
      for (; next[r] < end; ++next[r])
        if (llvm::Error e = rankStage(r, next[r]))
          return e;
    }
    if (k == matched)
      break;
    // The collective: its launch's dispatch stays each rank's host time
    // (a collective takes no issue=); its parts on each rank's stream.
    std::vector<std::string> streams;
    std::vector<llvm::StringRef> deps;
    std::vector<int32_t> partStreams;
    std::vector<program::Dependency> partDeps;
    llvm::StringSet<> seen;
    double shortest = 0, longest = 0;
    for (size_t r = 0; r < n; ++r) {
      const ImportedStep &s = ranks[r].step;
      const ImportedStage &st = s.stages[collectives[r][k].first];
      const double issue = st.dispatchUs - profile.launchUs;
      if (issue >= 0.0005) {
        const Time dispatch = timeOf(issue);
        const std::string name =
            freshName(formatv("r{0}_issue_{1}", r, collectiveName[k]).str());
        hostStage(r, name, dispatch);
        add({name, formatv("on rank{0}", r).str(), "cpu " + dispatch.text, "", "",
             "// the launch's dispatch"});
      }
      streams.push_back(streamOf(r, s.opOf(st).stream));
      partStreams.push_back(int32_t(streamIndex[r].at(s.opOf(st).stream)));
      for (uint32_t d : st.deps)
        if (seen.insert(nameOf[r][d]).second) {
          deps.push_back(nameOf[r][d]);
          partDeps.push_back(program::Dependency{indexOf[r][d], 0, {}, -1});
        }
      shortest = r == 0 ? st.durUs : std::min(shortest, st.durUs);
      longest = std::max(longest, st.durUs);
      ++next[r];
    }
    if (deps.size() > kMaxDependencies)
      return fail(formatv("collective '{0}' depends on {1} stages of the ranks; a stage may "
                          "have at most {2}",
                          collectiveName[k], deps.size(), kMaxDependencies)
                      .str());
    std::string on = "on ";
    for (size_t r = 0; r < n; ++r)
      on += (r ? ", " : "(") + streams[r];
    // Its parts, one per rank, one after another; a dependency on it names
    // the first.
    const Time time = timeOf(shortest);
    const uint32_t first = uint32_t(p.stages.size());
    for (size_t r = 0; r < n && withProgram; ++r) {
      indexOf[r][collectives[r][k].first] = first;
      program::Stage &part = p.stages.emplace_back();
      file.communicates.push_back(true);
      part.name =
          n > 1 ? formatv("{0}:rank{1}", collectiveName[k], r).str() : collectiveName[k];
      part.work = program::CollectiveWork{};
      part.collective().op = collectives[0][k].second;
      part.durationUs = time.us;
      part.collective().group = first;
      part.collective().parts = uint32_t(n);
      part.stream = partStreams[r];
      part.deps = partDeps;
    }
    const ImportedStep &s0 = ranks[0].step;
    std::string comment = "// ";
    addCommentText(comment, s0.names[s0.opOf(s0.stages[collectives[0][k].first]).name]);
    add({collectiveName[k], on + ")",
         std::string(spelling(collectives[0][k].second)) + " " + time.text, "", depsText(deps),
         comment +
             formatv("; the ranks measured {0} to {1}", timeText(shortest), timeText(longest))
                 .str()});
  }
  // The limits sema holds the written file to: its stages (a collective's
  // parts one per rank), their dependencies as spread over the parts (each
  // part keeps its own rank's), its streams.
  sema::PipelineSize size;
  size.stages = rows.size() + matched * (n - 1);
  for (const Rank &rank : ranks)
    for (const ImportedStage &st : rank.step.stages)
      size.edges += st.deps.size();
  size.streams = streams;
  if (llvm::Error e = checkSize(size, formatv("the {0} ranks' step", n).str()))
    return e;
  file.head = std::move(t);
  if (withProgram)
    program::spreadCollectives(p);
  // (Measured once the collectives' dependencies are spread over their
  // parts, as sema measures the file it reads.)
  assert((!withProgram || (sema::measure(p, 0).stages == size.stages &&
                           sema::measure(p, 0).edges == size.edges)) &&
         "the size counted is the program's");
  return file;
}

void RanksFile::write(llvm::raw_ostream &os) const {
  os << head;
  std::string line;
  for (const Row &row : rows) {
    line.clear();
    stageColumns.write(line, "stage", row.cells(), row.cell(5));
    os << line;
  }
  os << "}\n";
}

std::string RanksFile::text() const {
  // Sized once: a file of a million stages is a few hundred megabytes,
  // and growing it by doubling would hold one and a half times that.
  size_t bytes = head.size() + 2;
  for (const Row &row : rows)
    bytes += stageColumns.length("stage", row.cells(), row.cell(5));
  std::string t;
  t.reserve(bytes);
  t += head;
  for (const Row &row : rows)
    stageColumns.write(t, "stage", row.cells(), row.cell(5));
  t += "}\n";
  assert(t.size() == bytes && "Columns::length is what write appends");
  return t;
}
