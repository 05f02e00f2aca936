#include "tools/heraldctl/interrupt.h"

namespace herald::heraldctl {

Interrupt::Registration::Registration(Interrupt* interrupt, grpc::ClientContext* context)
    : interrupt_(interrupt) {
  if (interrupt_ != nullptr) interrupt_->SetActive(context);
}

Interrupt::Registration::~Registration() {
  if (interrupt_ != nullptr) interrupt_->SetActive(nullptr);
}

void Interrupt::SetActive(grpc::ClientContext* context) {
  base::MutexLock lock(&mu_);
  active_ = context;
  if (active_ != nullptr && triggered_) active_->TryCancel();
}

void Interrupt::Trigger() {
  base::MutexLock lock(&mu_);
  triggered_ = true;
  if (active_ != nullptr) active_->TryCancel();
}

bool Interrupt::triggered() const {
  base::MutexLock lock(&mu_);
  return triggered_;
}

}  // namespace herald::heraldctl
