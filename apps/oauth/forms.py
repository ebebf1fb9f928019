"""The consent form: which namespaces an application may use, and how."""

from __future__ import annotations

from django import forms
from oauth2_provider.forms import AllowForm

from apps.access.permissions import role_of
from apps.memories.models import Namespace

from .resource import same_resource
from .services import grantable_namespaces

ACCESS_CHOICES = [
    ("read", "Read only: search and read memories"),
    ("write", "Read and write: also store, change and forget (where your role allows it)"),
]


class NamespaceChoice(forms.ModelMultipleChoiceField):
    def __init__(self, user, **kwargs):
        self.user = user
        super().__init__(**kwargs)

    def label_from_instance(self, namespace: Namespace) -> str:
        return f"{namespace.name} (you: {role_of(self.user, namespace)})"


class ConsentForm(AllowForm):
    """django-oauth-toolkit's hidden authorization fields plus the person's choices. The
    namespaces offered are only those the person can see, so a grant never leaves them."""

    def __init__(self, *args, user, resource: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.expected_resource = resource
        grantable = [ns.pk for ns in grantable_namespaces(user)]
        self.fields["namespaces"] = NamespaceChoice(
            user,
            queryset=Namespace.objects.filter(pk__in=grantable).order_by("name"),
            required=False,
            widget=forms.CheckboxSelectMultiple,
            error_messages={
                "invalid_choice": "You are not a member of namespace %(value)s.",
                "invalid_pk_value": "'%(pk)s' is not a namespace.",
            },
        )
        self.fields["access"] = forms.ChoiceField(
            choices=ACCESS_CHOICES, initial="read", widget=forms.RadioSelect
        )
        # A person with one namespace has nothing to choose: it comes checked, so Allow works.
        if len(grantable) == 1:
            self.fields["namespaces"].initial = grantable

    def clean_resource(self) -> str:
        resource = self.cleaned_data.get("resource") or self.expected_resource
        if not same_resource(resource, self.expected_resource):
            raise forms.ValidationError(f"Tokens are only issued for {self.expected_resource}.")
        return self.expected_resource

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("allow") and not cleaned.get("namespaces") and "namespaces" in cleaned:
            self.add_error("namespaces", "Choose at least one namespace.")
        return cleaned
