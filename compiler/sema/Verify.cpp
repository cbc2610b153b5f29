//===- Verify.cpp - What holds of a whole pipeline ------------------------===//
//
// Once every stage of a pipeline is read: recorded graphs whole, no cycle,
// state buffers marked, the unrolled program within the limits.
//
//===----------------------------------------------------------------------===//

#include "compiler/sema/Checker.h"

using namespace pipec;
using namespace pipec::program;
using namespace pipec::sema;
using llvm::formatv;

/// A recorded graph's stages: declared one after another (one host call
/// launched them), only the first with `issue=` (the host's time before
/// that call).
void Sema::checkRecordedGraphs(Pipeline &out) {
  llvm::DenseMap<int64_t, uint32_t> first; // graph -> its first stage
  int64_t open = -1;                       // the graph of the stage before
  for (uint32_t i = 0; i < out.stages.size(); ++i) {
    const Stage &st = out.stages[i];
    if (st.graph >= 0 && st.graph != open) {
      auto [it, inserted] = first.try_emplace(st.graph, i);
      if (!inserted) {
        diags
            .error(st.range,
                   formatv("stage '{0}' of recorded graph {1} is not declared with the "
                           "graph's other stages: one call launched them, so they come one "
                           "after another",
                           st.name, st.graph))
            .attachNote(out.stages[it->second].range,
                        formatv("graph {0} begins here", st.graph));
      }
    } else if (st.graph >= 0 && st.issueUs > 0) {
      diags
          .error(st.range,
                 formatv("only the first stage of recorded graph {0} takes 'issue=': the "
                         "others are launched by the same call",
                         st.graph))
          .attachNote(out.stages[first.lookup(st.graph)].range,
                      formatv("graph {0} begins here", st.graph));
    }
    open = st.graph;
  }
}

void Sema::checkCycles(const Pipeline &out) {
  // A collective's parts are issued together, as one: their dependencies
  // are its own.
  std::vector<std::vector<uint32_t>> dependsOn(out.stages.size());
  auto node = [&](uint32_t v) {
    return isCollective(out.stages[v]) ? out.stages[v].collective().group : v;
  };
  for (uint32_t v = 0; v < out.stages.size(); ++v)
    for (const Dependency &d : out.stages[v].deps)
      if (!d.previousIteration())
        dependsOn[node(v)].push_back(node(d.stage));
  for (const std::vector<uint32_t> &cycle : sema::findCycles(dependsOn)) {
    // A collective by its name, not its first part's.
    auto name = [&](uint32_t v) -> llvm::StringRef {
      const Stage &st = out.stages[v];
      llvm::StringRef full = st.name;
      return collectiveParts(st) > 1 ? full.split(':').first : full;
    };
    std::string path;
    for (uint32_t v : cycle)
      path += name(v).str() + " -> ";
    path += name(cycle.front()).str();
    // Point at the dependency that leaves the cycle's first stage (a
    // declared one, where there is one).
    auto edge = [&](uint32_t from, uint32_t to) -> const Dependency * {
      const Dependency *found = nullptr;
      for (const Dependency &d : out.stages[from].deps)
        if (!d.previousIteration() && d.stage == to && (!found || found->inferred()))
          found = &d;
      return found;
    };
    const Dependency *leaving = edge(cycle[0], cycle[1 % cycle.size()]);
    auto report = diags.error(leaving ? leaving->range : out.stages[cycle[0]].range,
                              "dependency cycle: " + path);
    // Each inferred edge of the cycle: the buffer that requires it.
    for (size_t i = 0; i < cycle.size(); ++i) {
      uint32_t from = cycle[i], to = cycle[(i + 1) % cycle.size()];
      const Dependency *d = edge(from, to);
      if (d && d->inferred())
        report.attachNote(out.buffers[d->inferredFrom].range,
                          formatv("'{0}' depends on '{1}' through buffer '{2}' "
                                  "(sync inferred)",
                                  out.stages[from].name, out.stages[to].name,
                                  out.buffers[d->inferredFrom].name));
    }
    // The data orders accesses as the stages are declared: a declared
    // dependency on a stage declared later, in a cycle with an inferred
    // one, is a consumer written before its producer.
    bool inferred = false;
    for (size_t i = 0; i < cycle.size(); ++i) {
      const Dependency *d = edge(cycle[i], cycle[(i + 1) % cycle.size()]);
      inferred |= d && d->inferred();
    }
    for (size_t i = 0; inferred && i < cycle.size(); ++i) {
      uint32_t from = cycle[i], to = cycle[(i + 1) % cycle.size()];
      const Dependency *d = edge(from, to);
      if (d && !d->inferred() && to > from) {
        report.attachNote(d->range,
                          formatv("the data is ordered as the stages are declared: '{0}', "
                                  "declared before '{1}', touches the buffer first, yet "
                                  "depends on '{1}'; declare '{1}' first",
                                  out.stages[from].name, out.stages[to].name));
        break;
      }
    }
  }
}

/// Which buffers are loop-carried state: declared so, or read in an
/// iteration before it writes them (in program order: declaration order).
/// A device buffer that stages read but none writes holds data from outside
/// the pipeline: a warning, unless it is declared `state`.
void Sema::markState(Pipeline &out) {
  program::markLoopCarried(out);
  const size_t n = out.buffers.size();
  std::vector<uint8_t> read(n, 0), written(n, 0);
  for (const Stage &st : out.stages)
    for (const Access &a : st.accesses)
      (a.write ? written : read)[a.buffer] = 1;
  for (size_t b = 0; b < n; ++b) {
    Buffer &buffer = out.buffers[b];
    if (read[b] && !written[b] && !buffer.host && !buffer.stateDeclared)
      diags.warning(buffer.range,
                    formatv("device buffer '{0}' is read but no stage writes it: its "
                            "contents come from outside the pipeline; declare it "
                            "'buffer {0} ... state;' if they do (weights, a cache)",
                            buffer.name));
  }
}

PipelineSize sema::measure(const Pipeline &out, uint64_t automaticStreams) {
  PipelineSize size;
  size.stages = out.stages.size();
  size.iterations = out.iterations;
  bool unpinned = false;
  for (const Stage &st : out.stages) {
    unpinned |= program::unpinned(st);
    size.spacing = std::max<uint64_t>(size.spacing, st.runs.spacing(out.iterations));
    for (const Dependency &d : st.deps) {
      if (d.distance < size.iterations)
        size.edges += size.iterations - d.distance;
      if (d.distance > size.distance)
        size.distance = d.distance, size.farthest = &d;
    }
  }
  size.streams = out.streams.size() + (unpinned ? automaticStreams : 0);
  return size;
}

std::optional<std::string> sema::sizeProblem(const PipelineSize &size) {
  const uint64_t stages = size.stages, iterations = size.iterations;
  const uint64_t instances = stages * iterations;
  if (instances > kMaxStageInstances)
    return formatv("too many stage instances: {0} stages x {1} iterations = {2}; the limit "
                   "is {3}",
                   stages, iterations, instances, kMaxStageInstances)
        .str();
  if (size.edges > kMaxInstanceEdges)
    return formatv("too many dependencies between stage instances: {0} after unrolling {1} "
                   "iterations; the limit is {2}",
                   size.edges, iterations, kMaxInstanceEdges)
        .str();
  // The reduction and the race check keep a vector clock over the streams
  // for each instance a dependency can reach back over: @prev's distance,
  // and past the iterations a conditional stage skips.
  const uint64_t reach = std::max<uint64_t>(1, size.distance) + size.spacing;
  const uint64_t window = std::min(instances, reach * stages);
  const uint64_t streams = size.streams;
  if (window * std::max<uint64_t>(1, streams) > kMaxClockEntries)
    return formatv("this pipeline needs {0} vector-clock entries ({1} instances a "
                   "dependency can reach back over, {2} stages x {3} iterations, times {4} "
                   "streams); the limit is {5}: a shorter @prev distance, fewer stages or "
                   "fewer streams{6}",
                   window * streams, window, stages, std::min<uint64_t>(iterations, reach),
                   streams, kMaxClockEntries,
                   size.spacing > 1 ? " (a stage that skips iterations reaches back over "
                                      "the iterations it skips)"
                                    : "")
        .str();
  return std::nullopt;
}

/// Every limit that bounds what a pipeline costs after unrolling (sizeProblem),
/// and the file's totals. Each is an error at the pipeline (the vector
/// clocks' at the farthest @prev), saying what to change.
void Sema::checkSize(const Pipeline &out, llvm::SMRange iterationsAt) {
  const PipelineSize size = measure(out, options.automaticStreams);
  if (std::optional<std::string> problem = sizeProblem(size)) {
    const bool clocks =
        size.stages * size.iterations <= kMaxStageInstances && size.edges <= kMaxInstanceEdges;
    llvm::SMRange at = clocks && size.farthest && size.farthest->range.isValid()
                           ? size.farthest->range
                           : iterationsAt;
    diags.error(at, *problem);
    return;
  }
  const uint64_t instances = size.stages * size.iterations, edges = size.edges;
  fileInstances += instances;
  fileEdges += edges;
  if (fileInstances > kMaxFileInstances || fileEdges > kMaxInstanceEdges)
    diags.error(iterationsAt,
                formatv("pipeline '{0}' brings this file to {1} stage instances and "
                        "{2} dependencies between them; a file may have at most {3} "
                        "and {4} in all (every schedule of a file is kept until it is "
                        "written)",
                        out.name, fileInstances, fileEdges, kMaxFileInstances,
                        kMaxInstanceEdges));
}
