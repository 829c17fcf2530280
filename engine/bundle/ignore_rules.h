#pragma once
// .gitignore-style exclusion for code bundles (gitignore(5)): blank lines and '#' comments are
// skipped, '!' re-includes, a trailing '/' matches directories only, a pattern with a '/' at
// its start or in its middle is anchored to the directory of the file that holds it (else it
// matches a name at any depth below), '*' and '?' and '[...]' do not cross '/', and "**"
// matches any number of directories. The last matching rule wins. Pure.

#include <string>
#include <string_view>
#include <vector>

namespace podium::bundle {

class IgnoreRules {
 public:
  // Adds the lines of one ignore file found in directory `base` ("" for the tree's root, else a
  // relative path such as "src/lib").
  void add_file(std::string_view base, std::string_view content);
  void add_line(std::string_view base, std::string_view line);

  // Whether a relative path (no leading '/') is excluded. The caller does not descend into an
  // excluded directory, as git does not: a file below it cannot be re-included.
  bool excluded(std::string_view path, bool is_directory) const;

 private:
  struct Rule {
    std::string base;     // directory of the ignore file, "" at the root
    std::string pattern;  // without '!', the trailing '/' and a leading '/'
    bool negate = false;
    bool directory_only = false;
    bool anchored = false;  // matched against the path below base, else against the name too
  };
  std::vector<Rule> rules_;
};

// fnmatch-like with the gitignore meaning of "**". Exposed for tests.
bool glob_match(std::string_view pattern, std::string_view path);

}  // namespace podium::bundle
