//===- Edit.cpp -----------------------------------------------------------===//

#include "compiler/format/Edit.h"

#include "compiler/format/Formatter.h"
#include "compiler/support/Fail.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <deque>

using namespace pipec;

namespace {

ast::Priority priorityOf(llvm::StringRef text) {
  ast::Priority p;
  if (text == "high")
    p.kind = ast::PriorityKind::High;
  else if (text == "normal")
    p.kind = ast::PriorityKind::Normal;
  else if (text == "low")
    p.kind = ast::PriorityKind::Low;
  else if (!text.empty() && !text.getAsInteger(10, p.raw))
    p.kind = ast::PriorityKind::Raw;
  return p;
}

} // namespace

llvm::Expected<std::string> pipec::applyEdits(const ast::File &file, llvm::StringRef source,
                                              llvm::StringRef pipeline,
                                              llvm::ArrayRef<Edit> edits) {
  // The copy's new names live here (the AST's names point into text).
  std::deque<std::string> text;
  auto keep = [&](const std::string &s) {
    text.push_back(s);
    return ast::Name{text.back()};
  };
  ast::File copy = file; // all of it: comments, version, every pipeline
  ast::Pipeline *target = nullptr;
  for (ast::Pipeline &p : copy.pipelines)
    if (p.name.text == pipeline)
      target = &p;
  if (!target)
    return fail("no pipeline '" + pipeline + "'");
  ast::Pipeline &p = *target;
  auto stage = [&](const std::string &name) -> ast::StageDecl * {
    for (ast::StageDecl &s : p.stages)
      if (s.name.text == name)
        return &s;
    return nullptr;
  };
  auto stream = [&](const std::string &name) -> ast::StreamDecl * {
    for (ast::StreamDecl &s : p.streams)
      if (s.name.text == name)
        return &s;
    return nullptr;
  };
  for (const Edit &e : edits) {
    switch (e.kind) {
    case Edit::SetStream: {
      ast::StageDecl *s = stage(e.stage);
      if (!s)
        return fail("no stage '" + e.stage + "'");
      if (e.stream.empty())
        s->stream.reset();
      else
        s->stream = keep(e.stream);
      break;
    }
    case Edit::AddStream: {
      if (stream(e.stream))
        return fail("stream '" + e.stream + "' exists");
      ast::StreamDecl d;
      d.name = keep(e.stream);
      if (!e.device.empty())
        d.device = keep(e.device);
      d.priority = priorityOf(e.priority);
      // After the last stream (or before the first item): where pipec fmt
      // puts it, in order, since the formatter keeps equal places in order.
      llvm::SMRange at = p.streams.empty() ? llvm::SMRange() : p.streams.back().range;
      if (!at.isValid()) {
        const char *first = nullptr;
        auto consider = [&](llvm::SMRange r) {
          if (r.isValid() && (!first || r.Start.getPointer() < first))
            first = r.Start.getPointer();
        };
        for (const ast::Setting &x : p.settings)
          consider(x.range);
        for (const ast::BufferDecl &x : p.buffers)
          consider(x.range);
        for (const ast::StageDecl &x : p.stages)
          consider(x.range);
        if (!first)
          return fail("pipeline '" + pipeline + "' is empty");
        at = {llvm::SMLoc::getFromPointer(first), llvm::SMLoc::getFromPointer(first)};
      }
      d.range = at;
      p.streams.push_back(d);
      break;
    }
    case Edit::SetPriority: {
      ast::StreamDecl *s = stream(e.stream);
      if (!s)
        return fail("no stream '" + e.stream + "'");
      llvm::SMRange range = s->priority.range;
      s->priority = priorityOf(e.priority);
      s->priority.range = range;
      break;
    }
    case Edit::SetSlots: {
      ast::BufferDecl *b = nullptr;
      for (ast::BufferDecl &x : p.buffers)
        if (x.name.text == e.buffer)
          b = &x;
      if (!b)
        return fail("no buffer '" + e.buffer + "'");
      ast::IntLit slots;
      slots.value = e.slots;
      slots.range = b->name.range();
      b->slots = slots;
      break;
    }
    case Edit::RemoveStream: {
      auto it =
          std::find_if(p.streams.begin(), p.streams.end(),
                       [&](const ast::StreamDecl &s) { return s.name.text == e.stream; });
      if (it == p.streams.end())
        return fail("no stream '" + e.stream + "'");
      p.streams.erase(it);
      break;
    }
    case Edit::RemoveAttribute: {
      ast::StageDecl *s = stage(e.stage);
      if (!s)
        return fail("no stage '" + e.stage + "'");
      auto it = std::find_if(s->attrs.begin(), s->attrs.end(),
                             [&](const ast::Attr &a) { return a.name.text == e.attribute; });
      if (it == s->attrs.end())
        return fail("stage '" + e.stage + "' has no attribute '" + e.attribute + "'");
      s->attrs.erase(it);
      break;
    }
    case Edit::AddDependency: {
      ast::StageDecl *s = stage(e.stage);
      if (!s)
        return fail("no stage '" + e.stage + "'");
      ast::Dep d;
      llvm::StringRef dep = e.dependency;
      size_t at = dep.find('@');
      d.stage = keep(dep.substr(0, at).str());
      if (at != llvm::StringRef::npos) {
        llvm::StringRef qualifier = dep.substr(at);
        size_t open = qualifier.find('(');
        auto q = std::make_unique<ast::Qualifier>();
        q->text = keep(qualifier.substr(0, open).str()).text;
        if (open != llvm::StringRef::npos) {
          ast::IntLit k;
          if (qualifier.substr(open + 1).drop_back().getAsInteger(10, k.value))
            return fail("bad dependency '" + dep + "'");
          q->distance = k;
        }
        d.qualifier = std::move(q);
      }
      s->deps.push_back(std::move(d));
      break;
    }
    }
  }
  return formatFile(copy, source);
}
