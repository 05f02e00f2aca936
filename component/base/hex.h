// component/base/hex.h
//
// Hexadecimal, written once: digests in the audit log and in folder names, token hashes in
// the configuration, key ids, percent-encoding. Decoding accepts either case; encoding says
// which it writes.
//
//   Sha256Hex("abc");                        // "ba7816bf..." (64 lower-case digits)
//   HexDecode("00ff") == std::string("\x00\xff", 2);
//   AppendHexByte('/', HexCase::kUpper, out);   // "2F"
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace herald::base {

enum class HexCase { kLower, kUpper };

// Appends the two digits of `byte`.
void AppendHexByte(unsigned char byte, HexCase hex_case, std::string& out);

// The digits of `bytes`, two per byte.
std::string HexEncode(std::string_view bytes, HexCase hex_case = HexCase::kLower);

// The value of one hex digit (either case), or -1.
int HexDigitValue(char c);

// The bytes `hex` spells; nullopt when its length is odd or a character is not a digit.
std::optional<std::string> HexDecode(std::string_view hex);

// Whether `text` is exactly `digits` lower-case hex digits.
bool IsLowerHex(std::string_view text, size_t digits);

// The lower-case hex SHA-256 of `bytes` (64 digits).
std::string Sha256Hex(std::string_view bytes);

}  // namespace herald::base
