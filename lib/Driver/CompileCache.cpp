//===- CompileCache.cpp - finished builds kept by content -----------------===//
//
// An entry is a folder DIR/<key> holding `out` (a copy of OUT, file or
// folder) and `outputs` (the files a depfile names, relative to OUT). It is
// written under a temporary name and renamed into place, so a reader sees a
// whole entry or none, and two builds storing the same key at once are
// harmless (the second rename fails; both entries were the same bytes).
//
//===----------------------------------------------------------------------===//

#include "rankc/Driver/CompileCache.h"
#include "rankc/Target/OutputFolder.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace rankc {

void CompileCache::add(llvm::StringRef name, llvm::StringRef value) {
  // Lengths first: ("ab", "c") and ("a", "bc") are different keys.
  std::string field = llvm::utostr(name.size()) + ":" + name.str() +
                      llvm::utostr(value.size()) + ":";
  hash.update(field);
  hash.update(value);
}

void CompileCache::addFile(llvm::StringRef name, llvm::StringRef file) {
  if (file.empty()) {
    add(name, "(none)");
    return;
  }
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  add(name, buffer ? (*buffer)->getBuffer() : llvm::StringRef("(unreadable)"));
}

const std::string &CompileCache::entry() {
  if (entryDir.empty()) {
    auto digest = hash.final();
    llvm::SmallString<256> p(dir);
    fs::make_absolute(p); // (createUniqueDirectory reads relative as /tmp/...)
    path::append(p, llvm::toHex(digest, /*LowerCase=*/true));
    entryDir = p.str().str();
  }
  return entryDir;
}

/// Copies the file or folder `from` to `to` (which does not exist), keeping
/// each file's permissions (the executables and `launch` stay executable).
static std::error_code copyTree(llvm::StringRef from, llvm::StringRef to) {
  fs::file_status st;
  if (std::error_code ec = fs::status(from, st))
    return ec;
  if (!fs::is_directory(st)) {
    if (std::error_code ec = fs::copy_file(from, to))
      return ec;
    return fs::setPermissions(to, st.permissions());
  }
  if (std::error_code ec = fs::create_directories(to))
    return ec;
  std::error_code ec;
  for (fs::directory_iterator it(from, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::SmallString<256> target(to);
    path::append(target, path::filename(it->path()));
    if (std::error_code sub = copyTree(it->path(), target))
      return sub;
  }
  return ec;
}

bool CompileCache::restore(llvm::StringRef out,
                           std::vector<std::string> &outputs) {
  llvm::SmallString<256> tree(entry()), list(entry());
  path::append(tree, "out");
  path::append(list, "outputs");
  auto buffer = llvm::MemoryBuffer::getFile(list, /*IsText=*/true);
  if (!buffer || !fs::exists(tree))
    return false;
  outputs.clear();
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines)
    outputs.push_back(line.str());
  // Copied beside OUT, then swapped in whole (OUT was checked to be
  // rankc's before the lookup, as for a build).
  std::string staged;
  if (makeStageBeside(out, staged))
    return false;
  fs::remove(staged); // copyTree makes it
  if (copyTree(tree, staged) || swapIntoPlace(staged, out)) {
    fs::remove_directories(staged);
    return false;
  }
  return true;
}

void CompileCache::store(llvm::StringRef out,
                         llvm::ArrayRef<std::string> outputs) {
  auto warn = [&](const llvm::Twine &what, std::error_code ec) {
    llvm::errs() << "warning: compile cache '" << dir << "': " << what
                 << ": " << ec.message() << " (the build itself is done)\n";
  };
  if (std::error_code ec = fs::create_directories(dir))
    return warn("cannot create it", ec);
  llvm::SmallString<256> complete(entry());
  path::append(complete, "outputs");
  if (fs::exists(complete))
    return;
  // An entry's copy of OUT carries OUT's marker: an entry that lost its
  // list is rankc's and is replaced; anything else at the entry's name is
  // left as it is, and this build is not kept.
  if (fs::exists(entry())) {
    llvm::SmallString<256> marker(entry());
    path::append(marker, "out", kOutputMarker);
    if (!fs::exists(marker))
      return warn("'" + entry() + "' is in the way and is not a cache entry",
                  std::make_error_code(std::errc::file_exists));
    fs::remove_directories(entry());
  }
  llvm::SmallString<256> unique;
  if (std::error_code ec = fs::createUniqueDirectory(entry() + ".tmp", unique))
    return warn("cannot store the build", ec);
  std::string staged = unique.str().str();
  llvm::SmallString<256> tree(staged), list(staged);
  path::append(tree, "out");
  path::append(list, "outputs");
  std::error_code ec = copyTree(out, tree);
  if (!ec) {
    llvm::raw_fd_ostream os(list, ec);
    for (const std::string &o : outputs)
      os << o << "\n";
  }
  if (ec) {
    fs::remove_directories(staged);
    return warn("cannot store the build", ec);
  }
  // Another build of the same key may have stored it meanwhile: the rename
  // then fails, and its entry is as good as this one.
  if (fs::rename(staged, entry()))
    fs::remove_directories(staged);
}

} // namespace rankc
