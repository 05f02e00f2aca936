// control/console/assets.h
//
// The web console's files (dist/ of this folder, built from src/ by esbuild), compiled into
// the binary by embed_assets. control/http/console_page serves them.
//
//   for (const ConsoleAsset& asset : ConsoleAssets()) Serve(asset.name, asset.bytes);
#pragma once

#include <span>
#include <string_view>

namespace herald::control::console {

struct ConsoleAsset {
  std::string_view name;   // "index.html", "main.js", "console.css"
  std::string_view bytes;  // the file as built
};

std::span<const ConsoleAsset> ConsoleAssets();

}  // namespace herald::control::console
