#pragma once
// A minimal expected-like result (C++20 has no std::expected).

#include <stdexcept>
#include <utility>
#include <variant>

#include "nous/http/error.hpp"

namespace nous::http {

/// Thrown by the throwing convenience wrappers, and by Result::value() and
/// Result::operator-> on a result that holds an error.
class HttpError : public std::runtime_error {
  public:
    explicit HttpError(Error e) : std::runtime_error(e.message), error_(std::move(e)) {}
    const Error& error() const noexcept { return error_; }

  private:
    Error error_;
};

template <typename T>
class Result {
  public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    T& value() & {
        if (!ok()) throw HttpError(error());
        return std::get<0>(v_);
    }
    const T& value() const& {
        if (!ok()) throw HttpError(error());
        return std::get<0>(v_);
    }
    T&& value() && {
        if (!ok()) throw HttpError(error());
        return std::get<0>(std::move(v_));
    }
    /// Like value(): throws HttpError when !ok(). The one throwing accessor
    /// of the non-throwing API: check ok() first, or use it where an error
    /// has already been handled.
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    /// Precondition: !ok() (undefined otherwise: std::get throws bad_variant_access).
    const Error& error() const& { return std::get<1>(v_); }
    Error& error() & { return std::get<1>(v_); }

  private:
    std::variant<T, Error> v_;
};

}  // namespace nous::http
