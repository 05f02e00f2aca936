#include "component/base/edit_distance.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"

namespace herald::base {

size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  auto same = [](char x, char y) { return absl::ascii_tolower(x) == absl::ascii_tolower(y); };
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string_view NearestName(std::string_view unknown, const std::vector<std::string_view>& known) {
  // Names are short; a long unknown name cannot be a typo of one and would only cost time (the
  // distance is quadratic).
  if (unknown.empty() || unknown.size() > 64) return {};
  std::string_view best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view name : known) {
    size_t distance = EditDistance(unknown, name);
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  const size_t longest = std::max(unknown.size(), best.size());
  const size_t allowed = std::max<size_t>(1, std::min<size_t>(3, longest / 3));
  return best_distance <= allowed ? best : std::string_view();
}

}  // namespace herald::base
