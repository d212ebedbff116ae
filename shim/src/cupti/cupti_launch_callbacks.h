// Launch metadata from the CUPTI callback API (preferred when the single subscriber slot is
// free): the driver calls us on every launch, whatever path led to it, with the correlation
// id its kernel records will carry; resource callbacks tell us about graph nodes created by
// stream capture and cloned by instantiation.
#pragma once

#include <string>

#include "cupti/cupti_api.h"

namespace pm2lat::shim {

enum class SubscribeResult { kSubscribed, kSlotTaken, kFailed };

class CuptiCallbacks {
 public:
  static CuptiCallbacks& instance();

  // Subscribes as "pm2lat" and enables the launch and graph callbacks. On kSlotTaken,
  // `holder` names the current subscriber when CUPTI says (cuptiSubscribe_v2).
  SubscribeResult subscribe(const CuptiApi* api, std::string* holder, std::string* reason);
  // Gives the slot back (when the interposers were asked to record launches instead).
  void unsubscribe() noexcept;

  void reset_after_fork() noexcept {
    subscriber_ = nullptr;
    api_ = nullptr;
  }

  // The callback CUPTI calls (public for tests driving it directly).
  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain,
                                   CUpti_CallbackId cbid, const void* data);

 private:
  const CuptiApi* api_ = nullptr;
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

}  // namespace pm2lat::shim
