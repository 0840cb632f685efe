//===- OutputFolder.cpp - what rankc may replace, and how -----------------===//
//
// The checks run twice: before the compile (so that a refused OUT costs
// nothing) and again just before the swap (a user may have put files there
// while the programs were being built).
//
//===----------------------------------------------------------------------===//

#include "rankc/Target/OutputFolder.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace rankc {

namespace {

/// `p` absolute, with symbolic links resolved as far as it exists: the
/// existing part through realpath, the rest appended.
std::string resolved(llvm::StringRef p) {
  llvm::SmallString<256> abs(p);
  fs::make_absolute(abs);
  path::remove_dots(abs, /*remove_dot_dot=*/true);
  llvm::SmallString<256> real;
  if (!fs::real_path(abs, real))
    return real.str().str();
  llvm::StringRef parent = path::parent_path(abs);
  if (parent.empty() || parent == abs)
    return abs.str().str();
  llvm::SmallString<256> out(resolved(parent));
  path::append(out, path::filename(abs));
  return out.str().str();
}

/// Whether `inner` is `outer` or lies below it (both resolved).
bool within(llvm::StringRef inner, llvm::StringRef outer) {
  if (inner == outer)
    return true;
  if (outer == "/")
    return true;
  return inner.starts_with(outer) && inner.size() > outer.size() &&
         inner[outer.size()] == '/';
}

/// Whether `dir` holds folders only, however nested, and no file: nothing
/// of anyone's to lose (build systems make OUT's subfolders before the
/// compile that writes into them: CMake for OUT/lib of --emit lib).
bool onlyFolders(llvm::StringRef dir, unsigned depth = 0) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec, /*follow=*/false), end;
       !ec && it != end; it.increment(ec)) {
    llvm::ErrorOr<fs::basic_file_status> st = it->status();
    if (depth > 8 || !st || st->type() != fs::file_type::directory_file ||
        !onlyFolders(it->path(), depth + 1))
      return false;
  }
  return !ec;
}

/// Up to three names of what `dir` holds, for the message.
std::string someEntries(llvm::StringRef dir, bool &empty) {
  std::error_code ec;
  std::string names;
  unsigned count = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (count < 3)
      names += (count ? ", '" : "'") + path::filename(it->path()).str() + "'";
    ++count;
  }
  empty = !ec && (count == 0 || onlyFolders(dir));
  if (count > 3)
    names += " and " + std::to_string(count - 3) + " more";
  return names;
}

} // namespace

std::string whyNotOutputFolder(llvm::StringRef out, llvm::StringRef input) {
  std::string quoted = "'" + out.str() + "'";
  if (out == "-")
    return "-o -: this --emit writes a folder, not standard output";
  fs::file_status st;
  if (std::error_code ec = fs::status(out, st, /*follow=*/false)) {
    if (ec == std::errc::no_such_file_or_directory)
      return ""; // a new folder
    return "cannot read -o " + quoted + ": " + ec.message();
  }
  std::string real = resolved(out);
  llvm::SmallString<256> cwd;
  if (!fs::current_path(cwd) && within(resolved(cwd), real))
    return "-o " + quoted +
           " is the current folder or one above it, which rankc never "
           "replaces; name a new folder for the build";
  if (!input.empty() && input != "-" && within(resolved(input), real))
    return "-o " + quoted + " holds the input '" + input.str() +
           "'; rankc never replaces a folder holding its input; name a new "
           "folder for the build";
  if (st.type() == fs::file_type::symlink_file)
    return "-o " + quoted +
           " is a symbolic link; rankc replaces only folders it wrote; name "
           "a new folder for the build";
  if (st.type() != fs::file_type::directory_file)
    return "-o " + quoted +
           " is a file; this --emit writes a folder and rankc never replaces "
           "a file with it; name a new folder for the build";
  llvm::SmallString<256> marker(out);
  path::append(marker, kOutputMarker);
  fs::file_status ms;
  if (!fs::status(marker, ms, /*follow=*/false) &&
      ms.type() == fs::file_type::regular_file)
    return ""; // an earlier compile's
  bool empty = false;
  std::string names = someEntries(out, empty);
  if (empty)
    return "";
  return "-o " + quoted + " is a folder that rankc did not write (it holds " +
         names + "); rankc replaces only an empty folder or one an earlier "
         "compile wrote (with its " + kOutputMarker.str() +
         " marker); name a new folder for the build";
}

std::string whyNotOutputFile(llvm::StringRef out) {
  if (out == "-")
    return "";
  fs::file_status st;
  if (fs::status(out, st) || st.type() != fs::file_type::directory_file)
    return "";
  return "-o '" + out.str() +
         "' is a folder; this --emit writes a file and rankc never replaces "
         "a folder with it; name a file, or '-' for standard output";
}

std::error_code writeOutputMarker(llvm::StringRef folder) {
  llvm::SmallString<256> marker(folder);
  path::append(marker, kOutputMarker);
  std::error_code ec;
  llvm::raw_fd_ostream os(marker, ec);
  if (ec)
    return ec;
  os << "This folder was written by `rankc compile`. The next compile to it\n"
        "replaces it whole (and anything put into it): keep no files of your\n"
        "own here.\n";
  os.close();
  return os.error();
}

std::error_code makeStageBeside(llvm::StringRef out, std::string &stage) {
  llvm::SmallString<256> p;
  llvm::SmallString<256> trimmed(out);
  while (trimmed.size() > 1 && path::is_separator(trimmed.back()))
    trimmed.pop_back();
  // Absolute: createUniqueDirectory puts a relative name under the system's
  // temporary folder, not beside OUT (`-o sub/out` failed when /tmp/sub did
  // not exist, and `-o out` staged in /tmp, across file systems).
  if (std::error_code ec = fs::make_absolute(trimmed))
    return ec;
  // OUT's parent folders are made as needed (new folders only).
  llvm::StringRef parent = path::parent_path(trimmed);
  if (!parent.empty())
    if (std::error_code ec = fs::create_directories(parent))
      return ec;
  if (std::error_code ec =
          fs::createUniqueDirectory(trimmed + ".rankc-tmp", p))
    return ec;
  stage = p.str().str();
  return {};
}

std::error_code swapIntoPlace(llvm::StringRef stage, llvm::StringRef out) {
  fs::file_status st;
  if (fs::status(out, st, /*follow=*/false))
    return fs::rename(stage, out); // nothing there
#ifdef SYS_renameat2
  std::string from = stage.str(), to = out.str();
  if (syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(),
              /*RENAME_EXCHANGE=*/2) == 0) {
    fs::remove_directories(stage); // what was at OUT
    return {};
  }
  if (errno != ENOSYS && errno != EINVAL)
    return std::error_code(errno, std::generic_category());
#endif
  // No exchange on this file system: OUT moved aside, then replaced.
  llvm::SmallString<256> old, model(out);
  fs::make_absolute(model); // beside OUT, not in the temporary folder
  if (std::error_code ec = fs::createUniqueDirectory(model + ".rankc-old", old))
    return ec;
  fs::remove(old);
  if (std::error_code ec = fs::rename(out, old))
    return ec;
  if (std::error_code ec = fs::rename(stage, out)) {
    fs::rename(old, out);
    return ec;
  }
  fs::remove_directories(old);
  return {};
}

} // namespace rankc
