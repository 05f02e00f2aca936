#include "component/media/resampler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace herald::media {
namespace {

// The kernel's half-width, in zero crossings of the sinc; with the Kaiser window below the
// stopband is some 80 dB down, far below what a phone microphone's noise floor leaves.
constexpr int kZeroCrossings = 16;
constexpr double kKaiserBeta = 8.0;
// Table entries per zero crossing; the kernel between two entries is interpolated linearly.
constexpr int kTableResolution = 256;
// The cutoff, as a fraction of the lower Nyquist frequency: the window's transition band fits
// under it (7.2 kHz for 16 kHz output, above the 6.8 kHz where PocketSphinx's filters stop).
constexpr double kRolloff = 0.9;

using KernelTable = std::array<float, kZeroCrossings * kTableResolution + 2>;

// sinc(x) times a Kaiser window, for x from 0 to kZeroCrossings (in zero crossings), and a
// zero past the end so that interpolating at the last entry reads a real value.
const KernelTable& Kernel() {
  static const KernelTable* const table = [] {
    auto* t = new KernelTable();
    const double pi = std::acos(-1.0);
    const double norm = std::cyl_bessel_i(0.0, kKaiserBeta);
    const int last = kZeroCrossings * kTableResolution;
    for (int i = 0; i <= last; ++i) {
      const double x = static_cast<double>(i) / kTableResolution;
      const double sinc = i == 0 ? 1.0 : std::sin(pi * x) / (pi * x);
      const double r = x / kZeroCrossings;
      const double window = std::cyl_bessel_i(0.0, kKaiserBeta * std::sqrt(1.0 - r * r)) / norm;
      (*t)[i] = static_cast<float>(sinc * window);
    }
    (*t)[last + 1] = 0.0f;
    return t;
  }();
  return *table;
}

int16_t ToInt16(double sample) {
  const double scaled = std::round(sample * 32767.0);
  return static_cast<int16_t>(std::clamp(scaled, -32768.0, 32767.0));
}

}  // namespace

std::vector<int16_t> ResampleToSpeechRate(std::span<const float> mono, int input_rate) {
  std::vector<int16_t> out;
  if (input_rate <= 0 || mono.empty()) return out;
  if (input_rate == kSpeechRate) {
    out.reserve(mono.size());
    for (float sample : mono) out.push_back(ToInt16(sample));
    return out;
  }
  const KernelTable& kernel = Kernel();
  // The sinc's frequency scale: zero crossings per input sample.
  const double scale =
      kRolloff * std::min(1.0, static_cast<double>(kSpeechRate) / static_cast<double>(input_rate));
  const double half_width = kZeroCrossings / scale;  // in input samples
  const double table_step = scale * kTableResolution;
  const int64_t in_count = static_cast<int64_t>(mono.size());
  const int64_t out_count = in_count * kSpeechRate / input_rate;
  out.reserve(static_cast<size_t>(out_count));
  for (int64_t n = 0; n < out_count; ++n) {
    // Output sample n sits at input position n * input_rate / 16000, kept exact in integers.
    const int64_t numerator = n * input_rate;
    const double t = static_cast<double>(numerator / kSpeechRate) +
                     static_cast<double>(numerator % kSpeechRate) / kSpeechRate;
    const int64_t first = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(t - half_width)));
    const int64_t last =
        std::min<int64_t>(in_count - 1, static_cast<int64_t>(std::floor(t + half_width)));
    double sum = 0.0;
    for (int64_t k = first; k <= last; ++k) {
      const double position = std::abs(t - static_cast<double>(k)) * table_step;
      const size_t index = static_cast<size_t>(position);
      if (index >= kernel.size() - 1) continue;
      const double fraction = position - static_cast<double>(index);
      const double weight = kernel[index] + fraction * (kernel[index + 1] - kernel[index]);
      sum += mono[static_cast<size_t>(k)] * weight;
    }
    out.push_back(ToInt16(sum * scale));
  }
  return out;
}

}  // namespace herald::media
